// Windows: a console control handler runs on a thread the system starts for it; it counts the
// request and returns TRUE (handled), and wait() takes the requests one by one. Returning from the
// handler of a console closing ends the process after a few seconds whatever it returns, so that
// one is only as graceful as the drain is short.
#ifdef _WIN32
#include <windows.h>

#include <condition_variable>
#include <mutex>

#include "cli/stop_signals.h"

namespace strata {
namespace {

std::mutex g_mutex;
std::condition_variable g_arrived;
int g_pending = 0;

BOOL WINAPI on_console_event(DWORD event) {
    if (event != CTRL_C_EVENT && event != CTRL_BREAK_EVENT && event != CTRL_CLOSE_EVENT) return FALSE;
    {
        std::lock_guard lock(g_mutex);
        ++g_pending;
    }
    g_arrived.notify_all();
    return TRUE;
}

}  // namespace

StopSignals::StopSignals() { SetConsoleCtrlHandler(on_console_event, TRUE); }

void StopSignals::request() { on_console_event(CTRL_BREAK_EVENT); }

int StopSignals::wait() {
    std::unique_lock lock(g_mutex);
    g_arrived.wait(lock, [] { return g_pending > 0; });
    --g_pending;
    return 128 + 2;  // reported as SIGINT is on POSIX
}

}  // namespace strata
#endif  // _WIN32
