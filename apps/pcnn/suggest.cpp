// Edit distance by the textbook dynamic programme (the words are command-line words, short).
#include "apps/pcnn/suggest.hpp"

#include <algorithm>

namespace pcnn::cli {

int edit_distance(const std::string& a, const std::string& b) {
  // d[i][j]: distance between the first i characters of a and the first j of b.
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = int(i);
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = int(j);
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);  // "trian" -> "train"
    }
  return d[a.size()][b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_distance = std::max(1, int(word.size()) / 3) + 1;
  for (const std::string& c : candidates)
    if (const int d = edit_distance(word, c); d < best_distance) best = c, best_distance = d;
  if (!best.empty() || word.size() < 3) return best;
  for (const std::string& c : candidates)
    if (c.compare(0, word.size(), word) == 0 && (best.empty() || c.size() < best.size())) best = c;
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string m = closest_match(word, candidates);
  return m.empty() ? "" : " (did you mean '" + m + "'?)";
}

}  // namespace pcnn::cli
