#if defined(_WIN32)
#include "server/engine_process.h"

#include <windows.h>

namespace strata::server {

Result<std::unique_ptr<EngineProcess>> EngineProcess::start(const std::vector<std::string>&) {
    return Status::error("the engine supervisor needs POSIX processes; on Windows serve runs the engine in its own process (--no-supervise)");
}
Status EngineProcess::report_port(int, int) { return Status::error("no engine supervisor on Windows"); }
int EngineProcess::own_pid() { return static_cast<int>(GetCurrentProcessId()); }
EngineProcess::~EngineProcess() = default;
std::optional<int> EngineProcess::read_port(std::chrono::milliseconds) { return std::nullopt; }
std::optional<std::string> EngineProcess::poll_exit() { return ended_; }
std::string EngineProcess::wait() { return ended_.value_or(""); }
void EngineProcess::request_stop() const {}
void EngineProcess::kill() const {}

}  // namespace strata::server
#endif
