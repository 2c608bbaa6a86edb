#include "core/calendar.h"

namespace strata {

#ifdef _WIN32
std::tm local_calendar(std::time_t t) {
    std::tm tm{};
    localtime_s(&tm, &t);
    return tm;
}
std::tm utc_calendar(std::time_t t) {
    std::tm tm{};
    gmtime_s(&tm, &t);
    return tm;
}
std::time_t utc_time_of(std::tm tm) { return _mkgmtime(&tm); }
#else
std::tm local_calendar(std::time_t t) {
    std::tm tm{};
    localtime_r(&t, &tm);
    return tm;
}
std::tm utc_calendar(std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    return tm;
}
std::time_t utc_time_of(std::tm tm) { return timegm(&tm); }
#endif

}  // namespace strata
