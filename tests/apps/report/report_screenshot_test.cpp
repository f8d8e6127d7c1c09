// A report page rendered by headless Chromium (Debian's chromium): the screenshot is not blank
// and the plots are drawn (the curves' colour and the firing markers' colour are on it), and
// hovering a point of a curve shows its step and value. Skipped, saying so, without chromium;
// required (a failure) with RULESTREAM_REQUIRE_CHROMIUM=1 or CI set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <set>

#include "tests/apps/report/png_image.hpp"
#include "tests/apps/report/report_test_jobs.hpp"
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
  // LossNotDecreasing fires at many steps of the exploding run: many markers to see drawn (the
  // default set fires once per incident).
  write_text_file(
      page,
      report_page(dir.path() / "logdir", nullptr,
                  {{.configuration_name = "LossNotDecreasing", .rule = "LossNotDecreasing"}}));
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

// Moves the mouse over the middle point of the first curve of the first chart (the losses), as a
// person would, and writes what Chart.js' tooltip then holds into the page (the test's own
// script, added to a copy of the page; the report's script is untouched). On a loaded machine (a
// sanitizer build, CI's two cores) each step can come late in the browser's virtual time, so
// each is waited for rather than timed: the chart's layout (Chart.js lays a chart out once its
// canvas has a size, which can come after the load event), then the tooltip (Chart.js handles
// pointer events on an animation frame; the mouse is moved again every half second, and after
// two seconds the same position goes through Chart.js' lookup, since headless Chromium sometimes
// draws no frame after the first: 1 run in about 20). Whatever happens, the probe writes a line:
// the tooltip and how it came, or what it waited for in vain, or the error it met (a probe that
// wrote nothing failed CI once with no clue why).
constexpr const char* kHoverProbe = R"(<script>
function writeHover(text) {
  const out = document.createElement('pre');
  out.id = 'hover';
  out.textContent = text;
  document.body.appendChild(out);
}
function readTooltip(chart, canvas, set, index, point, triesLeft) {
  let body = chart.tooltip && chart.tooltip.body;
  let via = 'mouse';
  if ((!body || body.length === 0) && triesLeft > 0) {
    if (triesLeft % 10 === 0) moveTo(canvas, point);
    return setTimeout(() => readTooltip(chart, canvas, set, index, point, triesLeft - 1), 50);
  }
  if (!body || body.length === 0) {
    // Chart.js handles a mouse event on the next animation frame, and headless Chromium under
    // a virtual time budget sometimes draws no frame after the first: then the same mouse
    // position goes through Chart.js' own lookup (the chart's interaction mode) to the tooltip.
    // A chart event as Chart.js makes one from a mouse event: its position on the canvas.
    const event = { type: 'mousemove', native: null, x: point.x, y: point.y };
    const elements = chart.getElementsAtEventForMode(
      event, 'nearest', { axis: 'x', intersect: false }, true);
    chart.tooltip.setActiveElements(elements, { x: point.x, y: point.y });
    body = chart.tooltip.body;
    via = 'lookup';
  }
  if (!body || body.length === 0) {
    const box = canvas.getBoundingClientRect();
    return writeHover('no tooltip for the mouse over the curve: ' + JSON.stringify({
      point: [point.x, point.y], area: chart.chartArea, size: [chart.width, chart.height],
      box: [box.left, box.top, box.width, box.height], frames: window.framesSeen }));
  }
  // The events the chart itself listens to: with the fallback below, a chart that ignored the
  // mouse (options.events: []) would still show the tooltip, so the test asserts on these.
  writeHover(JSON.stringify({
    label: set.label, step: set.data[index].x, value: set.data[index].y, via: via,
    listens: chart.options.events, title: chart.tooltip.title,
    body: body.map((part) => part.lines).flat() }));
}
function moveTo(canvas, point) {
  const box = canvas.getBoundingClientRect();
  canvas.dispatchEvent(new MouseEvent('mousemove', {
    clientX: box.left + point.x, clientY: box.top + point.y, bubbles: true }));
}
function hoverWhenLaidOut(triesLeft) {
  const canvas = document.querySelector('canvas[data-chart]');
  const chart = canvas && Chart.getChart(canvas);
  const set = chart && chart.data.datasets[0];
  const index = set ? Math.floor(set.data.length / 2) : 0;
  const point = chart && chart.getDatasetMeta(0).data[index];
  if (!point || !Number.isFinite(point.x) || !Number.isFinite(point.y)) {
    if (triesLeft > 0) return setTimeout(() => hoverWhenLaidOut(triesLeft - 1), 50);
    return writeHover('the first chart was never laid out');
  }
  moveTo(canvas, point);
  setTimeout(() => readTooltip(chart, canvas, set, index, point, 40), 300);
}
window.framesSeen = 0;
(function countFrames() {
  window.framesSeen += 1;
  requestAnimationFrame(countFrames);
})();
window.addEventListener('error', (event) => writeHover('error: ' + event.message));
window.addEventListener('load', () => {
  try {
    hoverWhenLaidOut(160);
  } catch (error) {
    writeHover('error: ' + error);
  }
});
</script>)";

TEST(ReportScreenshotTest, HoveringACurveShowsItsStepAndValue) {
  const auto chromium = find_chromium();
  if (!chromium) {
    if (chromium_required()) FAIL() << "chromium is required (CI or RULESTREAM_REQUIRE_CHROMIUM=1)";
    GTEST_SKIP() << "no chromium: the hover test is skipped";
  }
  TempDir dir;
  write_exploding_logdir(dir.path() / "logdir", 400, 200);
  std::string html = report_page(dir.path() / "logdir");
  const auto end = html.rfind("</body>");
  ASSERT_NE(end, std::string::npos);
  html.insert(end, kHoverProbe);
  const auto page = dir.path() / "hover.html";
  write_text_file(page, html);
  const std::string command = "'" + chromium->string() +
                              "' --headless --no-sandbox --disable-gpu --user-data-dir='" +
                              (dir.path() / "profile").string() +
                              "' --window-size=1200,900 --virtual-time-budget=20000 --dump-dom "
                              "'file://" +
                              page.string() + "'";
  const CommandResult result = run_command(command);
  ASSERT_EQ(result.exit_code, 0) << command << "\n" << result.err;
  std::smatch found;
  ASSERT_TRUE(std::regex_search(result.out, found, std::regex(R"(<pre id="hover">([^<]*)</pre>)")))
      << "the probe wrote nothing: " << result.out.substr(0, 2000);
  // The DOM dump escapes &, < and > in text; JSON of labels and numbers has only quotes.
  const std::string text = std::regex_replace(found[1].str(), std::regex("&quot;"), "\"");
  ASSERT_TRUE(text.starts_with("{")) << "the probe said: " << text;
  const boost::json::object hover = boost::json::parse(text).as_object();
  const auto step = hover.at("step").to_number<std::int64_t>();
  const double value = hover.at("value").to_number<double>();
  const std::string label(hover.at("label").as_string());
  // How the tooltip came (the mouse's event, or the fallback lookup): in the test's output.
  std::cout << "the tooltip came by " << std::string(hover.at("via").as_string()) << "\n";
  // The chart answers the mouse itself (the fallback lookup would hide a chart that does not).
  const auto& listens = hover.at("listens").as_array();
  EXPECT_NE(std::find(listens.begin(), listens.end(), boost::json::value("mousemove")),
            listens.end())
      << text;
  ASSERT_EQ(hover.at("title").as_array().size(), 1U) << text;
  EXPECT_EQ(hover.at("title").as_array()[0].as_string(), "step " + std::to_string(step)) << text;
  // The hovered curve's line among the tooltip's (mode 'nearest' on x may list others), its
  // value to 6 significant digits (Number.toPrecision(6)).
  std::optional<double> said_value;
  for (const auto& line : hover.at("body").as_array()) {
    const std::string said(line.as_string());
    if (said.rfind(label + ": ", 0) == 0) said_value = std::stod(said.substr(label.size() + 2));
  }
  ASSERT_TRUE(said_value.has_value()) << text;
  EXPECT_GT(value, 0.0) << "the middle of the training loss before the fault is a finite loss";
  EXPECT_NEAR(*said_value, value, std::abs(value) * 1e-5) << text;
}

}  // namespace
}  // namespace rulestream::testing
