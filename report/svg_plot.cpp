// SVG rendering: axes with "nice" ticks (linear or log), polylines with markers, grouped bars
// with wrapped group labels, and a legend band above each plot. Files are written whole through
// a temporary name. Text widths are estimated (no font metrics): about 0.56 em per character.
#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/check.hpp"

namespace pcnn {

namespace {
const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                         "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
const char* color(size_t i) { return kColors[i % (sizeof(kColors) / sizeof(kColors[0]))]; }

double text_width(const std::string& s, double font_px) { return 0.56 * font_px * s.size(); }

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

// Tick labels: SI suffixes for large values (20k, 1.5M), so throughput axes stay short.
std::string fmt(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.3gG", v / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
  else if (a >= 1e4) std::snprintf(buf, sizeof buf, "%.3gk", v / 1e3);
  else if (a >= 1000) std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a != 0 && a < 1e-3) std::snprintf(buf, sizeof buf, "%.0e", v);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// The largest of 1, 2, 5 times a power of ten that is <= v (v > 0).
double nice_below(double v) {
  const double d = std::pow(10, std::floor(std::log10(v)));
  for (double m : {5.0, 2.0, 1.0})
    if (d * m <= v * (1 + 1e-9)) return d * m;
  return d;
}

// An axis maps data values to pixels, linearly or logarithmically.
struct Axis {
  double lo, hi;
  bool log;
  double p0, p1;  // pixel range
  double map(double v) const {
    const double a = log ? std::log10(std::max(v, 1e-300)) : v;
    const double l = log ? std::log10(lo) : lo, h = log ? std::log10(hi) : hi;
    return p0 + (a - l) / (h - l) * (p1 - p0);
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      // 1-2-5 per decade while that stays readable, else only the powers of ten.
      const bool dense = std::log10(hi / lo) <= 4.5;
      for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001; d *= 10)
        for (double m : {1.0, 2.0, 5.0})
          if ((dense || m == 1.0) && d * m >= lo * 0.9999 && d * m <= hi * 1.0001)
            t.push_back(d * m);
      if (t.size() >= 3) return t;
      // Less than a decade or so: every whole multiple, so the axis still has numbers on it.
      t.clear();
      for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001; d *= 10)
        for (int m = 1; m <= 9; ++m)
          if (d * m >= lo * 0.9999 && d * m <= hi * 1.0001) t.push_back(d * m);
      return t;
    }
    const double raw = (hi - lo) / 5;
    const double mag = std::pow(10, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
      if (raw <= m * mag) { step = m * mag; break; }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-6; v += step)
      t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return t;
  }
};

void range_of(const std::vector<Series>& ss, bool use_x, bool log, double& lo, double& hi) {
  lo = 1e300; hi = -1e300;
  auto take = [&](double v) {
    if (std::isfinite(v) && (!log || v > 0)) { lo = std::min(lo, v); hi = std::max(hi, v); }
  };
  for (const auto& s : ss) {
    for (double v : use_x ? s.x : s.y) take(v);
    if (!use_x && s.lo.size() == s.y.size() && s.hi.size() == s.y.size())
      for (size_t i = 0; i < s.y.size(); ++i) take(s.lo[i]), take(s.hi[i]);
  }
  if (lo > hi) { lo = log ? 1 : 0; hi = log ? 10 : 1; }
  if (lo == hi) { lo = log ? lo / 2 : lo - 1; hi = log ? hi * 2 : hi + 1; }
}

// Widens a value range by 5% each side (of its logarithm on a log axis) so no point sits on
// the frame; a linear range that starts at zero keeps starting there.
void pad_range(bool log, bool keep_zero, double& lo, double& hi) {
  if (log) {
    const double f = std::pow(hi / lo, 0.05);
    lo /= f, hi *= f;
    return;
  }
  const double pad = (hi - lo) * 0.05;
  hi += pad;
  if (!(keep_zero && lo == 0)) lo -= pad;
}

// Legend items flow left to right and wrap; returns the band's height.
struct LegendItem {
  std::string name;
  std::string color;
  std::string dash;  // stroke-dasharray ("" solid)
  double opacity = 1;  // a bar series drawn lighter (bar charts show a series' dash so)
};
int legend_height(const std::vector<LegendItem>& items, double width) {
  if (items.empty()) return 0;
  int lines = 1;
  double x = 0;
  for (const auto& it : items) {
    const double w = 22 + text_width(it.name, 11) + 14;
    if (x > 0 && x + w > width) ++lines, x = 0;
    x += w;
  }
  return lines * 16 + 4;
}
void legend(std::ostringstream& os, const std::vector<LegendItem>& items, double left,
            double width, double top) {
  double x = 0, y = top + 11;
  for (const auto& it : items) {
    const double w = 22 + text_width(it.name, 11) + 14;
    if (x > 0 && x + w > width) y += 16, x = 0;
    os << "<line x1='" << left + x << "' x2='" << left + x + 18 << "' y1='" << y - 4 << "' y2='"
       << y - 4 << "' stroke='" << it.color << "' stroke-width='" << (it.dash.empty() ? 6 : 3)
       << "' stroke-opacity='" << it.opacity << "'"
       << (it.dash.empty() ? "" : " stroke-dasharray='" + it.dash + "'")
       << "/><text x='" << left + x + 22
       << "' y='" << y << "' font-size='11'>" << esc(it.name) << "</text>\n";
    x += w;
  }
}
std::string color_of(const std::vector<Series>& ss, size_t i) {
  return ss[i].color.empty() ? color(i) : ss[i].color;
}
std::string dash_of(const Series& s) { return s.dashed ? "6,4" : s.dash; }

std::vector<LegendItem> legend_items(const std::vector<Series>& ss) {
  std::vector<LegendItem> items;
  for (size_t i = 0; i < ss.size(); ++i)
    items.push_back({ss[i].name, color_of(ss, i), dash_of(ss[i]), 1});
  return items;
}

// A vertical whisker with caps from lo to hi at x (pixels), for a measured spread.
void whisker(std::ostringstream& os, double x, double y_lo, double y_hi, const std::string& c) {
  os << "<path d='M" << x << "," << y_lo << "V" << y_hi << "M" << x - 3 << "," << y_lo << "h6M"
     << x - 3 << "," << y_hi << "h6' stroke='" << c << "' stroke-width='1.2' fill='none'/>\n";
}

void frame(std::ostringstream& os, int x0, int y0, int w, int h, const std::string& title,
           const std::string& xl, const std::string& yl, int plot_top, int plot_bottom) {
  os << "<rect x='" << x0 << "' y='" << y0 << "' width='" << w << "' height='" << h
     << "' fill='white'/>\n";
  os << "<text x='" << x0 + w / 2 << "' y='" << y0 + 20
     << "' text-anchor='middle' font-size='15' font-weight='bold'>" << esc(title) << "</text>\n";
  if (!xl.empty())
    os << "<text x='" << x0 + w / 2 << "' y='" << y0 + h - 6
       << "' text-anchor='middle' font-size='12'>" << esc(xl) << "</text>\n";
  os << "<text transform='translate(" << x0 + 14 << "," << (plot_top + plot_bottom) / 2
     << ") rotate(-90)' text-anchor='middle' font-size='12'>" << esc(yl) << "</text>\n";
}

void y_axis(std::ostringstream& os, const Axis& ay, int left, int right) {
  for (double t : ay.ticks()) {
    const double py = ay.map(t);
    os << "<line x1='" << left << "' x2='" << right << "' y1='" << py << "' y2='" << py
       << "' stroke='#ddd'/><text x='" << left - 4 << "' y='" << py + 4
       << "' text-anchor='end' font-size='11'>" << fmt(t) << "</text>\n";
  }
}

void line_chart(std::ostringstream& os, const LineChart& c, int x0, int y0, int w, int h) {
  const int left = x0 + 64, right = x0 + w - 20, bottom = y0 + h - 42;
  const auto items = legend_items(c.series);
  const int top = y0 + 32 + legend_height(items, right - left) + 4;
  frame(os, x0, y0, w, h, c.title, c.x_label, c.y_label, top, bottom);
  legend(os, items, left, right - left, y0 + 30);
  double xlo, xhi, ylo, yhi;
  range_of(c.series, true, c.log_x, xlo, xhi);
  range_of(c.series, false, c.log_y, ylo, yhi);
  if (c.y_from_zero && !c.log_y) ylo = std::min(ylo, 0.0);
  pad_range(c.log_y, c.y_from_zero, ylo, yhi);
  if (c.log_y) ylo = nice_below(ylo);  // a labelled tick below the lowest point
  // x is padded too when the chart has several x values, so end markers clear the frame.
  if (xhi > xlo) pad_range(c.log_x, false, xlo, xhi);
  const Axis ax{xlo, xhi, c.log_x, double(left), double(right)};
  const Axis ay{ylo, yhi, c.log_y, double(bottom), double(top)};
  y_axis(os, ay, left, right);
  for (double t : c.x_ticks.empty() ? ax.ticks() : c.x_ticks) {
    const double px = ax.map(t);
    os << "<line x1='" << px << "' x2='" << px << "' y1='" << top << "' y2='" << bottom
       << "' stroke='#eee'/><text x='" << px << "' y='" << bottom + 14
       << "' text-anchor='middle' font-size='11'>" << fmt(t) << "</text>\n";
  }
  os << "<rect x='" << left << "' y='" << top << "' width='" << right - left << "' height='"
     << bottom - top << "' fill='none' stroke='#444'/>\n";
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    const std::string col = color_of(c.series, i), dash = dash_of(s);
    const bool spread = s.lo.size() == s.y.size() && s.hi.size() == s.y.size();
    std::ostringstream pts;
    for (size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
      if (!std::isfinite(s.y[k]) || (c.log_y && s.y[k] <= 0)) continue;
      pts << ax.map(s.x[k]) << "," << ay.map(s.y[k]) << " ";
      if (spread && std::isfinite(s.lo[k]) && std::isfinite(s.hi[k]) &&
          (!c.log_y || (s.lo[k] > 0 && s.hi[k] > 0)))
        whisker(os, ax.map(s.x[k]), ay.map(s.lo[k]), ay.map(s.hi[k]), col);
      if (!s.dashed)
        os << "<circle cx='" << ax.map(s.x[k]) << "' cy='" << ay.map(s.y[k]) << "' r='3' fill='"
           << col << "'/>\n";
    }
    os << "<polyline points='" << pts.str() << "' fill='none' stroke='" << col
       << "' stroke-width='2'" << (dash.empty() ? "" : " stroke-dasharray='" + dash + "'")
       << "/>\n";
  }
}

// Splits a label into lines of at most max_chars characters at spaces (long words stay whole).
std::vector<std::string> wrap(const std::string& text, size_t max_chars) {
  std::vector<std::string> lines;
  std::istringstream words(text);
  std::string word, line;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > max_chars) lines.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

void bar_chart(std::ostringstream& os, const BarChart& c, int x0, int y0, int w, int h) {
  const int left = x0 + 64, right = x0 + w - 20;
  const size_t G = std::max<size_t>(1, c.groups.size()), S = std::max<size_t>(1, c.series.size());
  const double gw = double(right - left) / G, bw = gw * 0.8 / S;
  const size_t max_chars = std::max<size_t>(4, size_t(gw / (0.56 * 10)));
  size_t label_lines = 1;
  for (const auto& g : c.groups) label_lines = std::max(label_lines, wrap(g, max_chars).size());
  const int bottom = y0 + h - 14 - int(label_lines) * 12;
  auto items = legend_items(c.series);
  for (LegendItem& it : items)
    if (!it.dash.empty()) it.dash.clear(), it.opacity = 0.55;  // as the bars are drawn
  const int top = y0 + 32 + legend_height(items, right - left) + 4;
  frame(os, x0, y0, w, h, c.title, "", c.y_label, top, bottom);
  legend(os, items, left, right - left, y0 + 30);
  double ylo, yhi;
  range_of(c.series, false, c.log_y, ylo, yhi);
  if (c.log_y) {
    pad_range(true, false, ylo, yhi);
    ylo = nice_below(ylo);  // the smallest bar keeps some height
  } else {
    ylo = 0, yhi *= 1.08;
  }
  const Axis ay{ylo, yhi, c.log_y, double(bottom), double(top)};
  y_axis(os, ay, left, right);
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const double gx = left + g * gw;
    for (size_t s = 0; s < c.series.size(); ++s) {
      if (g >= c.series[s].y.size()) continue;
      const double v = c.series[s].y[g];
      if (!std::isfinite(v) || (c.log_y && v <= 0)) continue;
      const double py = ay.map(v);
      const Series& ser = c.series[s];
      const std::string col = color_of(c.series, s);
      const double bx = gx + gw * 0.1 + s * bw;
      os << "<rect x='" << bx << "' y='" << py << "' width='" << bw * 0.95 << "' height='"
         << std::max(0.0, bottom - py) << "' fill='" << col << "'"
         << (ser.dash.empty() ? "" : " fill-opacity='0.55' stroke='" + col + "'") << "/>\n";
      if (ser.lo.size() == ser.y.size() && ser.hi.size() == ser.y.size() &&
          std::isfinite(ser.lo[g]) && std::isfinite(ser.hi[g]) &&
          (!c.log_y || (ser.lo[g] > 0 && ser.hi[g] > 0)))
        whisker(os, bx + bw * 0.475, ay.map(ser.lo[g]), ay.map(ser.hi[g]), "#222");
    }
    const auto lines = wrap(c.groups[g], max_chars);
    for (size_t k = 0; k < lines.size(); ++k)
      os << "<text x='" << gx + gw / 2 << "' y='" << bottom + 13 + 12 * int(k)
         << "' text-anchor='middle' font-size='10'>" << esc(lines[k]) << "</text>\n";
  }
  os << "<rect x='" << left << "' y='" << top << "' width='" << right - left << "' height='"
     << bottom - top << "' fill='none' stroke='#444'/>\n";
}
}  // namespace

std::string render_svg(const Figure& fig) {
  const int n = int(fig.lines.size() + fig.bars.size());
  const int width = fig.width * std::max(1, n);
  // The footer wraps at the figure's width (a one-chart figure is narrow).
  const auto footer_lines = wrap(fig.footer, size_t(std::max(20.0, (width - 16) / (0.56 * 11))));
  const int footer = footer_lines.empty() ? 0 : 14 * int(footer_lines.size()) + 8;
  const int height = fig.height + footer;
  std::string title = fig.title;
  if (title.empty()) {
    for (const auto& c : fig.lines) title += (title.empty() ? "" : "; ") + c.title;
    for (const auto& c : fig.bars) title += (title.empty() ? "" : "; ") + c.title;
  }
  std::ostringstream os;
  os << "<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' width='"
     << width << "' height='" << height << "' viewBox='0 0 " << width << " " << height
     << "' font-family='Helvetica, Arial, sans-serif'>\n<title>" << esc(title) << "</title>\n";
  int i = 0;
  for (const auto& c : fig.lines) line_chart(os, c, fig.width * i++, 0, fig.width, fig.height);
  for (const auto& c : fig.bars) bar_chart(os, c, fig.width * i++, 0, fig.width, fig.height);
  if (footer) {
    os << "<rect x='0' y='" << fig.height << "' width='" << width << "' height='" << footer
       << "' fill='white'/>\n";
    for (size_t k = 0; k < footer_lines.size(); ++k)
      os << "<text x='8' y='" << fig.height + 12 + 14 * int(k) << "' font-size='11' fill='#444'>"
         << esc(footer_lines[k]) << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

void write_svg(const std::string& path, const Figure& fig) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    PCNN_CHECK(out, "cannot write '" << tmp << "'");
    out << render_svg(fig);
    PCNN_CHECK(out, "writing '" << tmp << "' failed");
  }
  PCNN_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, "cannot write '" << path << "'");
}

}  // namespace pcnn
