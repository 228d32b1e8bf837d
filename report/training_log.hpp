// The training log: one CSV row per epoch and, optionally, rows within epochs. `pcnn train
// --log` writes it, `--plot` draws the same rows, and `pcnn plot` draws them again from the file.
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "train/trainer.hpp"

namespace pcnn {

// A value left out of a row (test figures on step rows) is NaN here and an empty field in CSV.
struct LogRow {
  int epoch = 0;      // 1-based; on step rows the epoch in progress
  int64_t step = 0;   // step rows: steps since training began; 0 marks an epoch row
  double train_loss = NAN, train_accuracy = NAN, test_loss = NAN, test_accuracy = NAN;
  double learning_rate = NAN, images_per_s = NAN, elapsed_s = NAN;
  double val_loss = NAN, val_accuracy = NAN;  // epoch rows of a run with --val-split
  bool is_epoch_row() const { return step == 0; }
};

// The columns, in file order. The first eight are the epoch summary; `step` is empty on epoch
// rows. A run with a validation set adds val_loss and val_accuracy after `step`
// (training_log_columns(true)). Files written before learning_rate and the rest existed (epoch, train_loss,
// test_accuracy, images_per_s, elapsed_s) still read: columns are found by name.
const std::vector<std::string>& training_log_columns(bool validation = false);

LogRow epoch_row(const EpochStats& e);
// A step row covering the steps between two reports of one epoch (before: the earlier report,
// or a default StepProgress at the epoch's start): loss, accuracy and speed are over those steps.
LogRow step_row(const StepProgress& now, const StepProgress& before, double learning_rate,
                double elapsed_s);

// Writes the header at once and each row as it comes, flushed, so a run cut short keeps its log.
class TrainingLogFile {
 public:
  // Throws Error if it cannot be written; validation: with the val_ columns.
  explicit TrainingLogFile(const std::string& path, bool validation = false);
  void add(const LogRow& row);

 private:
  std::string path_;
  bool validation_ = false;
  std::ofstream out_;
};

// Every row of a log file. Throws Error naming the file and line on anything unreadable.
std::vector<LogRow> read_training_log(const std::string& path);

}  // namespace pcnn
