// "Did you mean": the known word closest to a mistyped one, by edit distance.
#pragma once

#include <string>
#include <vector>

namespace pcnn::cli {

// Edit distance: inserting, deleting or changing one character, or swapping two neighbours
// (the commonest typo), costs 1 each.
int edit_distance(const std::string& a, const std::string& b);

// The candidate the word most likely meant: the closest one within a third of the word's
// length (at least 1 edit), else the shortest candidate the word begins ("--batch" ->
// "--batch-size"); "" when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for closest_match, or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace pcnn::cli
