#if defined(_WIN32)
#include "server/engine_process.h"

namespace strata::server {

Result<std::unique_ptr<EngineProcess>> EngineProcess::start(const std::vector<std::string>&) {
    return Status::error("the engine supervisor needs POSIX processes; on Windows serve runs the engine in its own process (--no-supervise)");
}
EngineProcess::~EngineProcess() = default;
std::optional<int> EngineProcess::read_port(std::chrono::milliseconds) { return std::nullopt; }
std::optional<std::string> EngineProcess::poll_exit() { return ended_; }
std::string EngineProcess::wait() { return ended_.value_or(""); }
void EngineProcess::kill(int) const {}

}  // namespace strata::server
#endif
