#if !defined(_WIN32)
#include "server/engine_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace strata::server {
namespace {

std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char* name = sigabbrev_np(sig);
        return fmt::format("killed by signal {} (SIG{})", sig, name ? name : "?");
    }
    return fmt::format("wait status {}", status);
}

}  // namespace

Result<std::unique_ptr<EngineProcess>> EngineProcess::start(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Status::error("the engine's report pipe: {}", std::strerror(errno));
    // The child's end must survive exec: a copy without O_CLOEXEC, numbered in its arguments.
    const int child_end = fcntl(fds[1], F_DUPFD, 3);
    if (child_end < 0) {
        close(fds[0]);
        close(fds[1]);
        return Status::error("the engine's report pipe: {}", std::strerror(errno));
    }
    std::vector<std::string> args = argv;
    args.push_back("--engine-report-fd");
    args.push_back(std::to_string(child_end));
    // Built before fork: between fork and exec the child may only make async-signal-safe calls.
    std::vector<char*> c_args;
    for (std::string& a : args) c_args.push_back(a.data());
    c_args.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int e = errno;
        close(fds[0]);
        close(fds[1]);
        close(child_end);
        return Status::error("starting the engine process: {}", std::strerror(e));
    }
    if (pid == 0) {
#if defined(__linux__)
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // no engine outlives its supervisor
        if (getppid() != parent) _exit(127);
#endif
        // The supervisor blocks SIGINT/SIGTERM for its sigwait thread; the engine waits for them the same way.
        execv("/proc/self/exe", c_args.data());
        _exit(127);
    }
    (void)parent;
    close(fds[1]);
    close(child_end);
    return std::unique_ptr<EngineProcess>(new EngineProcess(pid, fds[0]));
}

Status EngineProcess::report_port(int report_fd, int port) {
    const std::string line = fmt::format("port {}\n", port);
    const bool written = write(report_fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    close(report_fd);
    if (!written) return Status::error("the engine could not report its port to the supervisor");
    return Status::ok();
}

int EngineProcess::own_pid() { return static_cast<int>(getpid()); }

void EngineProcess::watch_stop_pipe(int, std::function<void()>) {}

EngineProcess::~EngineProcess() {
    if (report_fd_ >= 0) close(report_fd_);
    if (!ended_) {
        ::kill(pid_, SIGKILL);
        wait();
    }
}

std::optional<int> EngineProcess::read_port(std::chrono::milliseconds timeout) {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (line.find('\n') == std::string::npos) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return std::nullopt;
        pollfd p{report_fd_, POLLIN, 0};
        const int ready = poll(&p, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return std::nullopt;
        char buf[64];
        const ssize_t n = read(report_fd_, buf, sizeof buf);
        if (n <= 0) return std::nullopt;  // the child exited (or closed the pipe) without a port
        line.append(buf, static_cast<size_t>(n));
    }
    int port = 0;
    if (std::sscanf(line.c_str(), "port %d", &port) != 1 || port <= 0 || port > 65535) return std::nullopt;
    return port;
}

std::optional<std::string> EngineProcess::poll_exit() {
    if (ended_) return ended_;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) ended_ = describe_wait_status(status);
    return ended_;
}

std::string EngineProcess::wait() {
    while (!ended_) {
        int status = 0;
        const pid_t r = waitpid(pid_, &status, 0);
        if (r == pid_) ended_ = describe_wait_status(status);
        else if (r < 0 && errno != EINTR) ended_ = fmt::format("lost ({})", std::strerror(errno));
    }
    return *ended_;
}

void EngineProcess::request_stop() const {
    if (!ended_) ::kill(pid_, SIGTERM);
}

void EngineProcess::kill() const {
    if (!ended_) ::kill(pid_, SIGKILL);
}

}  // namespace strata::server
#endif
