// The report page (html_report.hpp). Charts are inline SVG drawn here; colours come from CSS
// variables that a prefers-color-scheme rule swaps, so one page reads in light and dark mode.
#include "brick/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "brick/core/error.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "report/report_checks.hpp"

namespace brick::report {
namespace {

constexpr double kChartWidth = 960.0;

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Fewer decimals for larger numbers: three significant digits at least, at most three decimals.
int decimals(double value) noexcept {
  const double magnitude = std::fabs(value);
  if (magnitude >= 100.0) return 1;
  if (magnitude >= 1.0) return 2;
  return 3;
}

// Whole numbers (counts, tokens) without decimals.
std::string shown(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) return fmt::format("{:.0f}", value);
  return fmt::format("{:.{}f}", value, decimals(value));
}

// A number the page shows, with its unrounded value and a key that names where it came from (a
// span in HTML, a tspan inside SVG).
std::string number(std::string_view key, double value, std::string_view suffix = "") {
  return fmt::format(R"(<span class="n" data-key="{}" data-value="{}">{}</span>{})", escape(key), value, shown(value),
                     suffix);
}

std::string svg_number(std::string_view key, double value) {
  return fmt::format(R"(<tspan data-key="{}" data-value="{}">{}</tspan>)", escape(key), value, shown(value));
}

const char* kStyle = R"(
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1f24; --muted: #5b6470; --grid: #d5d9de;
  --bar: #3b6fd4; --bar2: #7aa2ec; --ok: #1f8a4c; --bad: #c62f2f; --warn: #b7791f; --panel: #f5f7fa;
  --k-layer: #8a6fd4; --k-brick: #3b6fd4; --k-kernel: #2aa198; --k-transfer: #b7791f; --k-sync: #9aa3ad; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #14171b; --fg: #e6e9ed; --muted: #9aa3ad; --grid: #343a42; --bar: #6b9cf0; --bar2: #3f5f99;
    --ok: #4cc38a; --bad: #f07171; --warn: #e0b050; --panel: #1d2126;
    --k-layer: #a58ef0; --k-brick: #6b9cf0; --k-kernel: #4fc1b8; --k-transfer: #e0b050; --k-sync: #6d7680; }
}
body { background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, sans-serif; margin: 24px auto;
  max-width: 1000px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 6px; }
p.note { color: var(--muted); margin: 4px 0 8px; }
section { background: var(--panel); border-radius: 8px; padding: 4px 16px 12px; margin: 16px 0; }
svg { display: block; width: 100%; height: auto; }
svg text { fill: var(--fg); font: 12px system-ui, sans-serif; }
svg .muted { fill: var(--muted); }
svg .grid { stroke: var(--grid); stroke-width: 1; }
svg .bar { fill: var(--bar); } svg .bar2 { fill: var(--bar2); }
svg .ok { fill: var(--ok); } svg .over { fill: var(--bad); }
svg .roof { stroke: var(--bad); stroke-width: 2; fill: none; }
svg .point { fill: var(--bar); stroke: var(--bg); stroke-width: 1; }
svg .k-layer { fill: var(--k-layer); } svg .k-brick { fill: var(--k-brick); } svg .k-kernel { fill: var(--k-kernel); }
svg .k-transfer { fill: var(--k-transfer); } svg .k-sync { fill: var(--k-sync); } svg .k-scope { fill: var(--k-sync); }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 6px; border-bottom: 1px solid var(--grid); text-align: right; }
th:first-child, td:first-child { text-align: left; }
.pass { color: var(--ok); font-weight: 600; } .fail { color: var(--bad); font-weight: 600; }
.verdict td { text-align: left; }
)";

std::string header(const ReportInput& in) {
  const double seconds = static_cast<double>(in.total_ns) / 1e9;
  std::string out = fmt::format("<header><h1>Brick report{}</h1>\n<p class=\"note\">",
                                in.run.title.empty() ? "" : ": " + escape(in.run.title));
  out += fmt::format("{} of brick time over {} tokens", number("total_ms", static_cast<double>(in.total_ns) / 1e6, " ms"),
                     number("total_tokens", static_cast<double>(in.total_tokens)));
  if (seconds > 0.0 && in.total_tokens > 0) {
    out += fmt::format(", {}", number("tokens_per_second", static_cast<double>(in.total_tokens) / seconds, " tokens/s"));
  }
  if (in.run.peaks) {
    out += fmt::format("; machine peaks {} and {}", number("peak_gflops", in.run.peaks->gflops_per_second, " GFLOP/s"),
                       number("peak_gbps", in.run.peaks->gb_per_second, " GB/s"));
  }
  return out + ".</p></header>\n";
}

std::string brick_chart(const ReportInput& in) {
  std::string out = "<section id=\"bricks\"><h2>Time per brick</h2>\n";
  if (in.bricks.empty()) return out + "<p class=\"note\">The profile holds no bricks (was the profiler on?).</p></section>\n";
  out += "<p class=\"note\">Bars: total time and share of all brick time. Right: time per token against the "
         "brick's budget (100% is exactly on budget; red is over).</p>\n";
  constexpr double kRow = 24.0, kTop = 22.0, kLabel = 210.0, kBars = 360.0, kUtilX = 740.0, kUtil = 150.0;
  double longest = 1.0, util_scale = 2.0;
  for (const BrickTime& b : in.bricks) {
    longest = std::max(longest, static_cast<double>(b.total_ns));
    if (b.utilisation) util_scale = std::max(util_scale, std::min(*b.utilisation, 10.0));
  }
  const double height = kTop + kRow * static_cast<double>(in.bricks.size()) + 8.0;
  out += fmt::format(R"(<svg class="chart" data-chart="bricks" viewBox="0 0 {} {}" role="img" aria-label="Time per brick">)",
                     kChartWidth, height);
  out += fmt::format(R"(<text x="{}" y="14" class="muted">total time (share)</text>)", kLabel + 8);
  out += fmt::format(R"(<text x="{}" y="14" class="muted">utilisation of the budget</text>)", kUtilX);
  const double hundred = kUtilX + kUtil / util_scale;
  out += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{:.1f}"/>)", hundred, kTop - 4, hundred,
                     height - 4);
  for (std::size_t i = 0; i < in.bricks.size(); ++i) {
    const BrickTime& b = in.bricks[i];
    const double y = kTop + kRow * static_cast<double>(i);
    const double width = std::max(1.0, kBars * static_cast<double>(b.total_ns) / longest);
    const std::string key = fmt::format("bricks.{}.", i);
    out += fmt::format(R"(<g data-brick="{}"><title>{}</title>)", escape(b.name), escape(b.name));
    out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)", kLabel, y + 15, escape(b.name));
    out += fmt::format(R"(<rect class="bar" x="{}" y="{:.1f}" width="{:.1f}" height="16"/>)", kLabel + 8, y + 3, width);
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{} ms ({}%)</text>)", kLabel + 12 + width, y + 15,
                       svg_number(key + "total_ms", static_cast<double>(b.total_ns) / 1e6),
                       svg_number(key + "share_percent", 100.0 * b.share));
    if (b.utilisation) {
      const double u = *b.utilisation;
      out += fmt::format(R"(<rect class="{}" x="{}" y="{:.1f}" width="{:.1f}" height="16"/>)", u > 1.0 ? "over" : "ok",
                         kUtilX, y + 3, std::max(1.0, kUtil * std::min(u, util_scale) / util_scale));
      out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}%</text>)", kUtilX + kUtil + 4, y + 15,
                         svg_number(key + "utilisation_percent", 100.0 * u));
    } else {
      out += fmt::format(R"(<text x="{}" y="{:.1f}" class="muted">no budget</text>)", kUtilX, y + 15);
    }
    out += "</g>";
  }
  return out + "</svg></section>\n";
}

// A logarithmic axis from lo to hi, drawn from `start` over `length` (negative: upwards).
struct LogAxis {
  double lo, hi, start, length;
  double at(double value) const { return start + length * (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)); }
};

std::string layer_chart(const ReportInput& in) {
  std::string out = "<section id=\"layers\"><h2>Tokens per second per layer</h2>\n";
  const RunFacts& run = in.run;
  if (run.layers.empty() || run.tokens == 0) {
    return out + "<p class=\"note\">No per-layer times in this profile: <code>brick run --profile-json</code> and "
                 "<code>brick run --report</code> record them.</p></section>\n";
  }
  out += fmt::format("<p class=\"note\">Every layer evaluated {} tokens; a bar is tokens over the layer's summed "
                     "time.</p>\n",
                     number("layer_tokens", static_cast<double>(run.tokens)));
  std::vector<double> rates;
  double fastest = 1.0, slowest = 1e300;
  for (const LayerTime& layer : run.layers) {
    rates.push_back(layer.ns > 0 ? static_cast<double>(run.tokens) * 1e9 / static_cast<double>(layer.ns) : 0.0);
    fastest = std::max(fastest, rates.back());
    if (rates.back() > 0.0) slowest = std::min(slowest, rates.back());
  }
  // A log axis: the embedding lookup runs orders of magnitude faster than a block.
  const double lo = std::pow(10.0, std::floor(std::log10(std::min(slowest, fastest)))),
               hi = std::pow(10.0, std::ceil(std::log10(fastest * 1.01)));
  constexpr double kLeft = 60.0, kTop = 16.0, kPlot = 200.0, kBottom = 70.0;
  const LogAxis axis{lo, hi, kTop + kPlot, -kPlot};
  const double n = static_cast<double>(run.layers.size());
  const double step = (kChartWidth - kLeft - 10.0) / n;
  const std::size_t label_every = static_cast<std::size_t>(std::ceil(14.0 / step));
  out += fmt::format(
      R"(<svg class="chart" data-chart="layers" viewBox="0 0 {} {}" role="img" aria-label="Tokens per second per layer">)",
      kChartWidth, kTop + kPlot + kBottom);
  for (double decade = lo; decade <= hi * 1.001; decade *= 10) {
    const double y = axis.at(decade);
    out += fmt::format(R"(<line class="grid" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}"/>)", kLeft, y, kChartWidth - 10, y);
    out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end" class="muted">{:g}</text>)", kLeft - 4, y + 4, decade);
  }
  for (std::size_t i = 0; i < run.layers.size(); ++i) {
    const double x = kLeft + step * static_cast<double>(i);
    const double h = rates[i] > 0.0 ? kTop + kPlot - axis.at(rates[i]) : 0.0;
    out += fmt::format(R"(<g data-layer="{}"><title>{}: {} tokens/s</title>)", escape(run.layers[i].layer),
                       escape(run.layers[i].layer), shown(rates[i]));
    out += fmt::format(R"(<rect class="bar" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)", x + step * 0.1,
                       kTop + kPlot - h, step * 0.8, h);
    if (i % std::max<std::size_t>(label_every, 1) == 0) {
      const double cx = x + step / 2.0, cy = kTop + kPlot + 8.0;
      out += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="end" transform="rotate(-45 {:.1f} {:.1f})">{}</text>)~",
                         cx, cy + 4, cx, cy, escape(run.layers[i].layer));
    }
    out += "</g>";
  }
  out += "</svg>\n<table data-table=\"layers\"><tr><th>layer</th><th>runs</th><th>time (ms)</th><th>tokens/s</th></tr>\n";
  for (std::size_t i = 0; i < run.layers.size(); ++i) {
    const std::string key = fmt::format("layers.{}.", i);
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(run.layers[i].layer),
                       number(key + "runs", static_cast<double>(run.layers[i].runs)),
                       number(key + "ms", static_cast<double>(run.layers[i].ns) / 1e6),
                       number(key + "tokens_per_second", rates[i]));
  }
  return out + "</table></section>\n";
}

std::string roofline_chart(const ReportInput& in) {
  std::string out = "<section id=\"roofline\"><h2>Roofline</h2>\n";
  const std::optional<graph::MachinePeaks>& peaks = in.run.peaks;
  if (peaks) {
    out += fmt::format("<p class=\"note\">Each brick's achieved GFLOP/s at its arithmetic intensity, under the roofs of "
                       "this machine's measured peaks: {} read bandwidth and {} (ridge at {} FLOP/byte).</p>\n",
                       number("roof_gbps", peaks->gb_per_second, " GB/s"),
                       number("roof_gflops", peaks->gflops_per_second, " GFLOP/s"),
                       number("ridge", peaks->ridge_point()));
  } else {
    out += "<p class=\"note\">No machine peaks in this profile, so no roofs: <code>brick run --report</code> and "
           "<code>--profile-json</code> measure them once per machine.</p>\n";
  }
  double x_lo = 1.0 / 16, x_hi = 16.0, y_lo = 1e9, y_hi = 1e-9;
  for (const BrickTime& b : in.bricks) {
    if (b.flops == 0 || b.bytes == 0 || b.gflop_per_second <= 0.0) continue;
    const double intensity = static_cast<double>(b.flops) / static_cast<double>(b.bytes);
    x_lo = std::min(x_lo, intensity / 2);
    x_hi = std::max(x_hi, intensity * 2);
    y_lo = std::min(y_lo, b.gflop_per_second / 2);
    y_hi = std::max(y_hi, b.gflop_per_second * 2);
  }
  if (peaks) {
    x_lo = std::min(x_lo, peaks->ridge_point() / 8);
    x_hi = std::max(x_hi, peaks->ridge_point() * 8);
    y_hi = std::max(y_hi, peaks->gflops_per_second * 2);
    y_lo = std::min(y_lo, peaks->gb_per_second * x_lo);
  }
  if (y_lo >= y_hi) {
    y_lo = 0.1;
    y_hi = 100.0;
  }
  const LogAxis x{x_lo, x_hi, 70.0, kChartWidth - 90.0};
  const LogAxis y{y_lo, y_hi, 330.0, -310.0};
  out += fmt::format(R"(<svg class="chart" data-chart="roofline" viewBox="0 0 {} 370" role="img" aria-label="Roofline">)",
                     kChartWidth);
  for (double decade = std::pow(10.0, std::ceil(std::log10(x_lo))); decade <= x_hi; decade *= 10) {
    out += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="20" x2="{0:.1f}" y2="330"/><text x="{0:.1f}" y="346" text-anchor="middle" class="muted">{1:g}</text>)",
                       x.at(decade), decade);
  }
  for (double decade = std::pow(10.0, std::ceil(std::log10(y_lo))); decade <= y_hi; decade *= 10) {
    out += fmt::format(R"(<line class="grid" x1="70" y1="{0:.1f}" x2="{1:.1f}" y2="{0:.1f}"/><text x="64" y="{2:.1f}" text-anchor="end" class="muted">{3:g}</text>)",
                       y.at(decade), kChartWidth - 20, y.at(decade) + 4, decade);
  }
  out += R"(<text x="515" y="364" text-anchor="middle" class="muted">arithmetic intensity (FLOP/byte)</text>)";
  out += R"~(<text x="14" y="175" text-anchor="middle" class="muted" transform="rotate(-90 14 175)">GFLOP/s</text>)~";
  if (peaks) {
    const double ridge = peaks->ridge_point();
    out += fmt::format(R"(<polyline class="roof" data-roof="1" points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}"><title>roof</title></polyline>)",
                       x.at(x_lo), y.at(std::max(y_lo, peaks->gb_per_second * x_lo)), x.at(ridge),
                       y.at(peaks->gflops_per_second), x.at(x_hi), y.at(peaks->gflops_per_second));
  }
  std::string table;
  std::vector<std::pair<double, double>> labels;  // placed so far: a label moves down until it is clear
  for (std::size_t i = 0; i < in.bricks.size(); ++i) {
    const BrickTime& b = in.bricks[i];
    const double intensity = b.bytes > 0 ? static_cast<double>(b.flops) / static_cast<double>(b.bytes) : 0.0;
    const std::string key = fmt::format("roofline.{}.", i);
    std::string bound = "no peaks", of_roof = "-";
    if (peaks) {
      const graph::Roofline point = graph::roofline(static_cast<double>(b.flops), static_cast<double>(b.bytes), b.total_ns, *peaks);
      bound = std::string(graph::name(point.bound));
      if (point.bound != graph::RooflineClass::Unknown) of_roof = number(key + "percent_of_roof", 100.0 * point.fraction_of_roof, "%");
    }
    table += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(b.name),
                         number(key + "intensity", intensity), number(key + "gb_per_second", b.gb_per_second),
                         number(key + "gflop_per_second", b.gflop_per_second), bound, of_roof);
    if (b.flops == 0 || b.bytes == 0 || b.gflop_per_second <= 0.0) continue;
    const double px = x.at(intensity), py = y.at(b.gflop_per_second);
    double ly = py - 6;
    while (std::any_of(labels.begin(), labels.end(), [&](const auto& l) {
      return std::fabs(l.first - px) < 110.0 && std::fabs(l.second - ly) < 13.0;
    })) {
      ly += 13.0;
    }
    labels.emplace_back(px, ly);
    out += fmt::format(R"(<g data-point="{}"><title>{}: {} FLOP/byte, {} GFLOP/s, {} GB/s</title><circle class="point" cx="{:.1f}" cy="{:.1f}" r="5"/><text x="{:.1f}" y="{:.1f}">{}</text></g>)",
                       escape(b.name), escape(b.name), shown(intensity), shown(b.gflop_per_second), shown(b.gb_per_second),
                       px, py, px + 7, ly, escape(b.name));
  }
  out += "</svg>\n<table data-table=\"roofline\"><tr><th>brick</th><th>FLOP/byte</th><th>GB/s</th><th>GFLOP/s</th>"
         "<th>bound</th><th>of the roof</th></tr>\n";
  return out + table + "</table></section>\n";
}

std::string_view kind_class(graph::NodeKind kind) noexcept {
  switch (kind) {
    case graph::NodeKind::Layer: return "k-layer";
    case graph::NodeKind::Brick: return "k-brick";
    case graph::NodeKind::Kernel: return "k-kernel";
    case graph::NodeKind::Transfer: return "k-transfer";
    case graph::NodeKind::Sync: return "k-sync";
    case graph::NodeKind::Scope: break;
  }
  return "k-scope";
}

std::string timeline_chart(const ReportInput& in) {
  std::string out = "<section id=\"timeline\"><h2>Timeline of one token</h2>\n";
  const RunFacts& run = in.run;
  if (run.timeline.empty()) {
    return out + "<p class=\"note\">No timeline in this profile: <code>brick run --report</code> records the last "
                 "pass, and <code>brick report PROFILE.json --graph GRAPH.json</code> takes it from a graph export.</p>"
                 "</section>\n";
  }
  // Lanes: the layers, the bricks (on the recording thread), then each thread's kernels.
  std::map<std::uint32_t, std::size_t> thread_lane;
  std::uint64_t end = 1;
  for (const TimelineSpan& span : run.timeline) {
    end = std::max(end, span.start_ns + span.duration_ns);
    if (span.kind != graph::NodeKind::Layer && span.kind != graph::NodeKind::Brick) thread_lane.emplace(span.thread, 0);
  }
  std::size_t lanes = 2;
  for (auto& [thread, lane] : thread_lane) lane = lanes++;
  out += fmt::format("<p class=\"note\">The last forward pass of the run (tokens: {}), {} long; hover a block for its name "
                     "and time.</p>\n",
                     number("timeline_tokens", static_cast<double>(run.timeline_tokens)),
                     number("timeline_us", static_cast<double>(end) / 1e3, " µs"));
  constexpr double kLeft = 90.0, kLane = 26.0, kTop = 8.0;
  const double plot = kChartWidth - kLeft - 10.0;
  const double height = kTop + kLane * static_cast<double>(lanes) + 30.0;
  out += fmt::format(R"(<svg class="chart" data-chart="timeline" viewBox="0 0 {} {:.0f}" role="img" aria-label="Timeline of one token">)",
                     kChartWidth, height);
  const auto lane_y = [&](std::size_t lane) { return kTop + kLane * static_cast<double>(lane); };
  out += fmt::format(R"(<text x="4" y="{:.1f}">layers</text><text x="4" y="{:.1f}">bricks</text>)", lane_y(0) + 16, lane_y(1) + 16);
  for (const auto& [thread, lane] : thread_lane) {
    out += fmt::format(R"(<text x="4" y="{:.1f}" data-lane="thread {}">thread {}</text>)", lane_y(lane) + 16, thread, thread);
  }
  for (int tick = 0; tick <= 5; ++tick) {
    const double tx = kLeft + plot * tick / 5.0;
    out += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2:.1f}"/><text x="{0:.1f}" y="{3:.1f}" text-anchor="middle" class="muted">{4} µs</text>)",
                       tx, kTop, lane_y(lanes), lane_y(lanes) + 16, shown(static_cast<double>(end) * tick / 5.0 / 1e3));
  }
  for (const TimelineSpan& span : run.timeline) {
    const std::size_t lane = span.kind == graph::NodeKind::Layer   ? 0
                             : span.kind == graph::NodeKind::Brick ? 1
                                                                   : thread_lane[span.thread];
    const double x = kLeft + plot * static_cast<double>(span.start_ns) / static_cast<double>(end);
    const double width = std::max(0.5, plot * static_cast<double>(span.duration_ns) / static_cast<double>(end));
    out += fmt::format(R"(<rect class="{}" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="20"><title>{} ({}, layer {}, thread {}): {} µs</title></rect>)",
                       kind_class(span.kind), x, lane_y(lane) + 2, width, escape(span.label), graph::name(span.kind),
                       span.layer, span.thread, shown(static_cast<double>(span.duration_ns) / 1e3));
  }
  return out + "</svg></section>\n";
}

std::string verdicts(const ReportInput& in) {
  std::string out = "<section id=\"verdicts\"><h2>Verification and checksums</h2>\n";
  if (in.run.verdicts.empty()) {
    return out + "<p class=\"note\">No verdicts in this profile: <code>brick run --report</code> and "
                 "<code>--profile-json</code> record the verification of every brick.</p></section>\n";
  }
  std::size_t failed = 0;
  for (const Verdict& v : in.run.verdicts) failed += v.passed ? 0 : 1;
  out += fmt::format("<p class=\"note\">{} checks, {} failed.</p>\n",
                     number("verdicts", static_cast<double>(in.run.verdicts.size())),
                     number("verdicts_failed", static_cast<double>(failed)));
  out += "<table class=\"verdict\" data-table=\"verdicts\"><tr><th>check</th><th>verdict</th><th>detail</th></tr>\n";
  for (const Verdict& v : in.run.verdicts) {
    out += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>\n", escape(v.check), v.passed ? "pass" : "fail",
                       v.passed ? "pass" : "FAIL", escape(v.detail));
  }
  return out + "</table></section>\n";
}

std::string brick_table(const ReportInput& in) {
  if (in.bricks.empty()) return {};
  std::string out = "<section id=\"table\"><h2>Every brick</h2>\n<table data-table=\"bricks\"><tr><th>brick</th><th>category</th>"
                    "<th>runs</th><th>total (ms)</th><th>share</th><th>µs/token</th><th>tokens/s</th><th>GB/s</th>"
                    "<th>GFLOP/s</th><th>budget µs/token</th><th>utilisation</th></tr>\n";
  for (std::size_t i = 0; i < in.bricks.size(); ++i) {
    const BrickTime& b = in.bricks[i];
    const std::string key = fmt::format("table.{}.", i);
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                       escape(b.name), escape(b.category), number(key + "count", static_cast<double>(b.count)),
                       number(key + "total_ms", static_cast<double>(b.total_ns) / 1e6),
                       number(key + "share_percent", 100.0 * b.share, "%"), number(key + "us_per_token", b.us_per_token),
                       number(key + "tokens_per_second", b.tokens_per_second),
                       number(key + "gb_per_second", b.gb_per_second),
                       number(key + "gflop_per_second", b.gflop_per_second));
    if (b.budget_us_per_token) {
      out += fmt::format("<td>{}</td><td>{}</td></tr>\n", number(key + "budget_us_per_token", *b.budget_us_per_token),
                         number(key + "utilisation_percent", 100.0 * *b.utilisation, "%"));
    } else {
      out += "<td>-</td><td>-</td></tr>\n";
    }
  }
  return out + "</table></section>\n";
}

}  // namespace

std::string to_html(const ReportInput& input) {
  detail::require_valid(input);
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "base-uri 'none'; form-action 'none'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"color-scheme\" content=\"light dark\">\n";
  page += fmt::format("<title>Brick report{}</title>\n<style>{}</style></head>\n<body>\n",
                      input.run.title.empty() ? "" : ": " + escape(input.run.title), kStyle);
  page += header(input);
  page += brick_chart(input);
  page += layer_chart(input);
  page += roofline_chart(input);
  page += timeline_chart(input);
  page += verdicts(input);
  page += brick_table(input);
  return page + "</body></html>\n";
}

void write_html_report(const std::filesystem::path& path, const ReportInput& input) {
  write_file_atomically(path, to_html(input));
}

}  // namespace brick::report
