// How numbers are written where people or programs read them back: files get the shortest text
// that parses to the same double; durations on progress lines get a short human form.
#pragma once

#include <string>

namespace pcnn {

// The shortest decimal text that reads back as exactly v ("0.1", "13328612.5", "1e-20");
// "nan" / "inf" / "-inf" for those.
std::string round_trip(double v);
// The same for a float: the shortest text that reads back as exactly v in float ("0.002", not
// the 0.0020000000949949026 that v is as a double).
std::string round_trip(float v);

// "8.4 s", "3 min 05 s", "2 h 07 min": for elapsed times and ETAs.
std::string duration_text(double seconds);

}  // namespace pcnn
