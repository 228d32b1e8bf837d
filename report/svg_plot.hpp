// A small SVG chart writer (line charts and grouped bar charts), so results people would rather
// see than read come out as pictures without any plotting dependency.
#pragma once

#include <string>
#include <vector>

namespace pcnn {

struct Series {
  std::string name;
  std::vector<double> x, y;
  bool dashed = false;  // line charts: a reference line (e.g. ideal scaling), drawn dashed
  std::string color = "";  // "#rrggbb"; empty: the palette's colour for the series' position
  std::string dash = "";   // line charts: an SVG stroke-dasharray for a data line ("" solid)
  // The measured spread of each point (e.g. min and max): a whisker from lo[i] to hi[i] where
  // both are given (same length as y), none where empty.
  std::vector<double> lo = {}, hi = {};
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool log_x = false, log_y = false;
  bool y_from_zero = false;
  std::vector<double> x_ticks;  // where to put x ticks (empty: automatic)
};

struct BarChart {
  std::string title, y_label;
  std::vector<std::string> groups;  // x positions (e.g. layers)
  std::vector<Series> series;       // one bar per series in each group; y[i] for groups[i]
  bool log_y = false;
};

// One figure: charts side by side, each width x height pixels. Each chart's legend sits in a band
// between its title and its plot area, so it never covers data.
struct Figure {
  std::vector<LineChart> lines;
  std::vector<BarChart> bars;
  int width = 560, height = 380;
  std::string title;   // the SVG's <title> (empty: the charts' titles joined)
  std::string footer;  // a line under the charts, e.g. machine, date and version
};

// Writes the figure (line charts first, then bar charts, left to right). Throws Error on I/O.
void write_svg(const std::string& path, const Figure& fig);
std::string render_svg(const Figure& fig);

}  // namespace pcnn
