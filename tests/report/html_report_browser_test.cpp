// The report page in a real browser: headless Chromium renders it with the network broken (every
// host name fails to resolve, and the proxy is a closed port), and must show every chart with its
// labels, log nothing to the page's console (the browser's own complaints, such as a missing
// D-Bus, are not the page's), try no load, and take a screenshot. Skipped, visibly, where Chromium is
// not installed (scripts/setup installs it); BRICK_CHROMIUM names another binary.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "brick/report/html_report.hpp"
#include "report/report_sample.hpp"

namespace brick::report {
namespace {

namespace fs = std::filesystem;

std::string chromium() {
  if (const char* named = std::getenv("BRICK_CHROMIUM"); named != nullptr && *named != '\0') return named;
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return {};
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct Rendering {
  int status = -1;
  std::string dom;
  std::string log;
  std::string png;
};

class ReportInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    browser_ = chromium();
    if (browser_.empty()) GTEST_SKIP() << "no Chromium (/usr/bin/chromium): scripts/setup installs it";
    folder_ = fs::temp_directory_path() / fmt::format("brick-report-browser-{}", getpid());
    fs::create_directories(folder_);
  }
  void TearDown() override {
    if (!folder_.empty()) fs::remove_all(folder_);
  }

  Rendering render(const std::string& html, const std::string& extra_flags = "") {
    const fs::path page = folder_ / "report.html";
    std::ofstream(page) << html;
    const fs::path dom = folder_ / "dom.html", log = folder_ / "log.txt", png = folder_ / "page.png";
    fs::remove(png);
    const std::string command = fmt::format(
        "timeout --kill-after=10 120 '{}' --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='{}' "
        "--host-resolver-rules='MAP * ~NOTFOUND' --proxy-server=127.0.0.1:9 --enable-logging=stderr --v=0 "
        "--virtual-time-budget=2000 --window-size=1000,2400 {} --screenshot='{}' --dump-dom 'file://{}' >'{}' 2>'{}'",
        browser_, (folder_ / "profile").string(), extra_flags, png.string(), page.string(), dom.string(), log.string());
    Rendering r;
    const int status = std::system(command.c_str());
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.dom = read(dom);
    r.log = read(log);
    if (r.status == 124) r.log += "\nchromium did not finish within 120 s";
    r.png = read(png);
    return r;
  }

  static std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  }

  std::string browser_;
  fs::path folder_;
};

TEST_F(ReportInChromium, EveryChartRendersOfflineWithoutConsoleMessages) {
  const Rendering r = render(to_html(parse_report_input(sample_profile_json())));
  ASSERT_EQ(r.status, 0) << r.log;
  // The whole page arrived: every chart and the last table, with their labels.
  for (const char* chart : {"bricks", "layers", "roofline", "timeline"}) {
    EXPECT_NE(r.dom.find(fmt::format(R"(data-chart="{}")", chart)), std::string::npos) << chart;
  }
  EXPECT_NE(r.dom.find(R"(data-table="verdicts")"), std::string::npos);
  EXPECT_NE(r.dom.find(R"(data-table="bricks")"), std::string::npos);
  EXPECT_NE(r.dom.find("<section id=\"table\">"), std::string::npos);
  EXPECT_NE(r.dom.rfind("</table></section>"), std::string::npos);
  EXPECT_EQ(count(r.dom, "<g data-brick="), 4u);
  EXPECT_EQ(count(r.dom, "<g data-layer="), 4u);
  EXPECT_NE(r.dom.find(R"(data-point="QkvProjection")"), std::string::npos);
  EXPECT_NE(r.dom.find(R"(data-lane="thread 1")"), std::string::npos);
  EXPECT_NE(r.dom.find(">QkvProjection</text>"), std::string::npos);
  EXPECT_NE(r.dom.find(">blk.0</text>"), std::string::npos);
  // The hostile name stayed text: the browser parsed no script out of it.
  EXPECT_EQ(r.dom.find("<script"), std::string::npos);
  EXPECT_NE(r.dom.find("&lt;script&gt;alert('x')&lt;/script&gt;&amp;\"name\""), std::string::npos);
  // Nothing to load from elsewhere, and nothing on the console (CSP violations land there too).
  for (const char* reference : {"src=", "href=", "url(", "@import"}) {
    EXPECT_EQ(r.dom.find(reference), std::string::npos) << reference;
  }
  EXPECT_EQ(r.log.find(":CONSOLE"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("net::ERR_"), std::string::npos) << r.log;
  ASSERT_GT(r.png.size(), 20000u);
  EXPECT_EQ(r.png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_F(ReportInChromium, DarkModeRendersToo) {
  const Rendering light = render(to_html(parse_report_input(sample_profile_json())));
  const Rendering dark = render(to_html(parse_report_input(sample_profile_json())), "--force-dark-mode");
  ASSERT_EQ(dark.status, 0) << dark.log;
  EXPECT_EQ(dark.log.find(":CONSOLE"), std::string::npos) << dark.log;
  ASSERT_GT(dark.png.size(), 20000u);
  EXPECT_NE(dark.png, light.png);
}

// The console check can fail: a page whose script the policy blocks is reported on the console.
TEST_F(ReportInChromium, TheConsoleCheckSeesABlockedScript) {
  std::string html = to_html(parse_report_input(sample_profile_json()));
  html.insert(html.find("</body>"), "<script>document.title = 'ran';</script>");
  const Rendering r = render(html);
  ASSERT_EQ(r.status, 0) << r.log;
  EXPECT_NE(r.log.find(":CONSOLE"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace brick::report
