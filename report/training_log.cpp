// Training-log CSV: numbers written as their shortest round-trip text, so a plot redrawn from
// the file is the plot drawn from the run.
#include "report/training_log.hpp"

#include <charconv>
#include <sstream>

#include "core/check.hpp"
#include "report/number_format.hpp"

namespace pcnn {

namespace {
// Column name -> member, in file order (epoch and step are written apart: they are integers).
struct Column {
  std::string name;
  double LogRow::*member;
  bool single = false;  // a float value kept in a double: written as the float it is
};
const std::vector<Column>& value_columns() {
  static const std::vector<Column> cols = {
      {"train_loss", &LogRow::train_loss},
      {"train_accuracy", &LogRow::train_accuracy},
      {"test_loss", &LogRow::test_loss},
      {"test_accuracy", &LogRow::test_accuracy},
      {"learning_rate", &LogRow::learning_rate, true},
      {"images_per_s", &LogRow::images_per_s},
      {"elapsed_s", &LogRow::elapsed_s}};
  return cols;
}

// Written after `step`, only by runs with a validation set.
const std::vector<Column>& validation_columns() {
  static const std::vector<Column> cols = {{"val_loss", &LogRow::val_loss},
                                           {"val_accuracy", &LogRow::val_accuracy}};
  return cols;
}

std::string field_text(double v, bool single) {
  if (std::isnan(v)) return "";
  return single ? round_trip(float(v)) : round_trip(v);
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');) fields.push_back(f);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

template <class T>
T parse_as(const std::string& text, const std::string& where) {
  T v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  PCNN_CHECK(r.ec == std::errc() && r.ptr == text.data() + text.size(),
             where << ": '" << text << "' is not a number");
  return v;
}

double parse_number(const std::string& text, const std::string& where, bool single = false) {
  if (text.empty()) return NAN;
  return single ? parse_as<float>(text, where) : parse_as<double>(text, where);
}
}  // namespace

const std::vector<std::string>& training_log_columns(bool validation) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"epoch"};
    for (const Column& c : value_columns()) n.push_back(c.name);
    n.push_back("step");
    return n;
  }();
  static const std::vector<std::string> with_val = [] {
    std::vector<std::string> n = names;
    for (const Column& c : validation_columns()) n.push_back(c.name);
    return n;
  }();
  return validation ? with_val : names;
}

LogRow epoch_row(const EpochStats& e) {
  LogRow r;
  r.epoch = e.epoch;
  r.train_loss = e.train_loss;
  r.train_accuracy = e.train_accuracy;
  r.test_loss = e.test_loss;
  r.test_accuracy = e.test_accuracy;
  r.learning_rate = e.learning_rate;
  r.images_per_s = e.images_per_s;
  r.elapsed_s = e.elapsed_s;
  r.val_loss = e.val_loss;
  r.val_accuracy = e.val_accuracy;
  return r;
}

LogRow step_row(const StepProgress& now, const StepProgress& before, double learning_rate,
                double elapsed_s) {
  LogRow r;
  r.epoch = now.epoch;
  r.step = int64_t(now.epoch - 1) * now.steps + now.step;
  const double images = double(now.images - before.images);
  r.train_loss = (now.loss_sum - before.loss_sum) / images;
  r.train_accuracy = (now.correct - before.correct) / images;
  r.learning_rate = learning_rate;
  r.images_per_s = images / (now.seconds - before.seconds);
  r.elapsed_s = elapsed_s;
  return r;
}

TrainingLogFile::TrainingLogFile(const std::string& path, bool validation)
    : path_(path), validation_(validation), out_(path) {
  PCNN_CHECK(out_, "cannot write the log '" << path << "'");
  std::string header;
  for (const std::string& c : training_log_columns(validation)) header += (header.empty() ? "" : ",") + c;
  out_ << header << "\n" << std::flush;
}

void TrainingLogFile::add(const LogRow& row) {
  out_ << row.epoch;
  for (const Column& c : value_columns()) out_ << "," << field_text(row.*c.member, c.single);
  out_ << "," << (row.is_epoch_row() ? "" : std::to_string(row.step));
  if (validation_)
    for (const Column& c : validation_columns()) out_ << "," << field_text(row.*c.member, c.single);
  out_ << "\n" << std::flush;
  PCNN_CHECK(out_, "writing the log '" << path_ << "' failed");
}

std::vector<LogRow> read_training_log(const std::string& path) {
  std::ifstream in(path);
  PCNN_CHECK(in, "cannot open the log '" << path << "'");
  std::string line;
  PCNN_CHECK(std::getline(in, line), "'" << path << "' is empty");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = split_csv_line(line);
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return int(i);
    return -1;
  };
  const int epoch_col = column("epoch"), step_col = column("step");
  PCNN_CHECK(epoch_col >= 0, "'" << path << "' has no epoch column: not a pcnn train --log file");
  std::vector<LogRow> rows;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // written on Windows
    if (line.empty()) continue;
    const std::vector<std::string> f = split_csv_line(line);
    const std::string where = path + ":" + std::to_string(line_no);
    PCNN_CHECK(f.size() == header.size(), where << ": " << f.size() << " fields, the header has "
                                                << header.size());
    LogRow r;
    r.epoch = parse_as<int>(f[epoch_col], where);
    if (step_col >= 0 && !f[step_col].empty()) r.step = parse_as<int64_t>(f[step_col], where);
    for (const auto* cols : {&value_columns(), &validation_columns()})
      for (const Column& c : *cols)
        if (const int i = column(c.name); i >= 0) r.*c.member = parse_number(f[i], where, c.single);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace pcnn
