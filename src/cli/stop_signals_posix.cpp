#ifndef _WIN32
#include <pthread.h>
#include <unistd.h>

#include "cli/stop_signals.h"

namespace strata {

// Blocked here, in the thread that starts every other: the threads started later inherit the mask.
StopSignals::StopSignals() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

void StopSignals::request() { kill(getpid(), SIGTERM); }  // blocked in every thread: sigwait takes it

int StopSignals::wait() {
    int sig = 0;
    while (sigwait(&signals_, &sig) != 0) {
    }
    return 128 + sig;
}

}  // namespace strata
#endif  // !_WIN32
