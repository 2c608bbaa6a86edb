#pragma once
// Calendar conversions with the thread-safe calls of each platform (localtime_r/gmtime_r/timegm
// on POSIX, localtime_s/gmtime_s/_mkgmtime on Windows).

#include <ctime>

namespace strata {

std::tm local_calendar(std::time_t t);
std::tm utc_calendar(std::time_t t);
// The UTC time a broken-down UTC calendar time stands for; out-of-range fields are normalized.
std::time_t utc_time_of(std::tm tm);

}  // namespace strata
