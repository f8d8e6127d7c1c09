// A report page rendered by headless Chromium (Debian's chromium): the screenshot is not blank
// and the plots are drawn (the curves' colour and the firing markers' colour are on it). Skipped,
// saying so, without chromium; required (a failure) with RULESTREAM_REQUIRE_CHROMIUM=1 or CI set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "tests/pipeline/report/png_image.hpp"
#include "tests/pipeline/report/report_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {
namespace {

std::optional<std::filesystem::path> find_chromium() {
  if (const char* path = std::getenv("RULESTREAM_CHROMIUM"); path != nullptr && *path != '\0') {
    return std::filesystem::path(path);
  }
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(candidate, X_OK) == 0) return std::filesystem::path(candidate);
  }
  return std::nullopt;
}

bool chromium_required() {
  const char* require = std::getenv("RULESTREAM_REQUIRE_CHROMIUM");
  const char* ci = std::getenv("CI");
  return (require != nullptr && std::string(require) == "1") || (ci != nullptr && *ci != '\0');
}

// How close two colours are: the largest difference of a channel.
int distance(const Rgba& pixel, int r, int g, int b) {
  return std::max({std::abs(pixel.r - r), std::abs(pixel.g - g), std::abs(pixel.b - b)});
}

TEST(ReportScreenshotTest, ChromiumDrawsTheCurvesAndTheFirings) {
  const auto chromium = find_chromium();
  if (!chromium) {
    if (chromium_required()) FAIL() << "chromium is required (CI or RULESTREAM_REQUIRE_CHROMIUM=1)";
    GTEST_SKIP() << "no chromium at /usr/bin/chromium (Debian's chromium package) nor "
                    "$RULESTREAM_CHROMIUM: the screenshot test is skipped";
  }
  TempDir dir;
  write_exploding_logdir(dir.path() / "logdir", 400, 200);
  const auto page = dir.path() / "report.html";
  write_text_file(page, report_page(dir.path() / "logdir"));
  const auto png = dir.path() / "shot.png";
  // As root (a container) Chromium's sandbox cannot start; --no-sandbox is harmless for a page
  // of our own with no network.
  const std::string command = "'" + chromium->string() +
                              "' --headless --no-sandbox --disable-gpu --hide-scrollbars "
                              "--user-data-dir='" +
                              (dir.path() / "profile").string() +
                              "' --window-size=1200,900 --virtual-time-budget=5000 "
                              "--screenshot='" +
                              png.string() + "' 'file://" + page.string() + "'";
  const CommandResult result = run_command(command);
  ASSERT_EQ(result.exit_code, 0) << command << "\n" << result.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << result.err;
  const PngImage image = read_png(png);
  ASSERT_EQ(image.width, 1200u);
  ASSERT_EQ(image.height, 900u);

  // Not blank: many colours, and a good share of the page is not background.
  std::set<std::uint32_t> colours;
  std::size_t inked = 0, curve = 0, firing = 0;
  for (const Rgba& pixel : image.pixels) {
    colours.insert(pixel.r << 16 | pixel.g << 8 | pixel.b);
    if (distance(pixel, 255, 255, 255) > 16) ++inked;
    // The first curve's colour (#1f77b4) and the firing markers' (#d62728), as the page's
    // script draws them (page_assets.cpp); anti-aliasing blurs edges, not a line's middle.
    if (distance(pixel, 0x1f, 0x77, 0xb4) < 24) ++curve;
    if (distance(pixel, 0xd6, 0x27, 0x28) < 24) ++firing;
  }
  EXPECT_GT(colours.size(), 50u);
  EXPECT_GT(inked, image.pixels.size() / 50) << "less than 2% of the page is drawn";
  EXPECT_GT(curve, 300u) << "the loss curve is not drawn";
  EXPECT_GT(firing, 30u) << "no firing is marked";
}

}  // namespace
}  // namespace rulestream::testing
