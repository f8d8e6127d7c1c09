#pragma once

// A PNG decoded to 8-bit RGBA with libpng, for checking screenshots.

#include <cstdint>
#include <filesystem>
#include <vector>

namespace rulestream::testing {

struct Rgba {
  std::uint8_t r = 0, g = 0, b = 0, a = 0;
};

struct PngImage {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<Rgba> pixels;  // row by row

  const Rgba& at(std::uint32_t x, std::uint32_t y) const { return pixels[y * width + x]; }
};

// Throws std::runtime_error naming the file when it is no PNG libpng can read.
PngImage read_png(const std::filesystem::path& path);

}  // namespace rulestream::testing
