#include "tests/apps/report/png_image.hpp"

#include <png.h>

#include <cstring>
#include <stdexcept>

namespace rulestream::testing {

PngImage read_png(const std::filesystem::path& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    throw std::runtime_error(path.string() + ": not a PNG: " + image.message);
  }
  image.format = PNG_FORMAT_RGBA;
  PngImage decoded;
  decoded.width = image.width;
  decoded.height = image.height;
  decoded.pixels.resize(static_cast<std::size_t>(image.width) * image.height);
  if (png_image_finish_read(&image, nullptr, decoded.pixels.data(), 0, nullptr) == 0) {
    const std::string message = image.message;
    png_image_free(&image);
    throw std::runtime_error(path.string() + ": " + message);
  }
  return decoded;
}

}  // namespace rulestream::testing
