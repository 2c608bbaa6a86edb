#pragma once
// The requests to stop a command from outside: Ctrl+C and SIGTERM on POSIX (blocked in every
// thread, taken by one waiting thread, so no handler ever runs inside the engine or an HTTP
// worker); Ctrl+C, Ctrl+Break and the console closing on Windows (a console control handler).
//
//   StopSignals stop;                 // first, before any thread starts
//   int code = stop.wait();           // blocks until one arrives: 128 + its number
//   stop.wait();                      // a second request

#ifndef _WIN32
#include <signal.h>
#endif

namespace strata {

class StopSignals {
public:
    StopSignals();
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    // Blocks until a stop request arrives; returns the exit code that reports it (128 + signal).
    int wait();
    // A stop request from inside the process (the Windows engine's stop pipe), taken by wait()
    // as if it came from outside: SIGTERM on POSIX, a Ctrl+Break on Windows.
    void request();

private:
#ifndef _WIN32
    sigset_t signals_{};
#endif
};

}  // namespace strata
