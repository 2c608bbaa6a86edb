#pragma once
// One engine child of `strata serve`'s supervisor (server/supervisor.h): the same executable
// started again with the user's `serve` arguments plus `--engine-report-fd N`, which makes it
// listen on a free loopback port and write "port P\n" to the pipe N. It dies with the supervisor.
// POSIX: fork and exec, the parent-death signal (Linux), stopped by SIGTERM, killed by SIGKILL.
// Windows: CreateProcess with only the two pipes' ends inherited (N is then a handle's value), in
// a job object that kills it when the supervisor's handle closes (the supervisor crashing too);
// stopped through a second pipe (`--engine-stop-fd N`: a line, or its end, asks the engine to
// drain and exit; Windows has no SIGTERM, and a console event would reach every process of the
// console), killed by TerminateProcess.
//
//   auto child = EngineProcess::start(argv);       // argv[0]: this executable
//   std::optional<int> port = child->read_port(std::chrono::seconds(30));
//   if (auto gone = child->poll_exit()) ...        // "killed by signal 9 (SIGKILL)"
//   child->kill(); std::string why = child->wait();

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace strata::server {

class EngineProcess {
public:
    static Result<std::unique_ptr<EngineProcess>> start(const std::vector<std::string>& argv);
    // The child's side: writes "port P\n" to the report pipe it was given and closes it.
    static Status report_port(int report_fd, int port);
    // The child's side on Windows: a thread that calls on_stop once the supervisor writes to the
    // stop pipe or closes it. Nothing elsewhere (a stop is SIGTERM there).
    static void watch_stop_pipe(int stop_fd, std::function<void()> on_stop);
    static int own_pid();
    ~EngineProcess();
    EngineProcess(const EngineProcess&) = delete;
    EngineProcess& operator=(const EngineProcess&) = delete;

    int pid() const { return pid_; }
    // The port the child reported, within `timeout`; nullopt when it exited or said nothing.
    std::optional<int> read_port(std::chrono::milliseconds timeout);
    // How the child ended, once it has (reaped here); nullopt while it runs.
    std::optional<std::string> poll_exit();
    // Blocks until the child has ended; how it ended.
    std::string wait();
    // Asks the child to finish its requests and exit (SIGTERM; Windows: the stop pipe); kill() ends
    // it at once (SIGKILL; Windows: TerminateProcess).
    void request_stop() const;
    void kill() const;

private:
    EngineProcess(int pid, int report_fd) : pid_(pid), report_fd_(report_fd) {}
    int pid_ = -1;
    int report_fd_ = -1;  // POSIX: the report pipe's read end
    // Windows handles (HANDLE is a void*): the process, its job, the supervisor's ends of the pipes.
    void* process_ = nullptr;
    void* job_ = nullptr;
    void* report_pipe_ = nullptr;
    void* stop_pipe_ = nullptr;
    std::optional<std::string> ended_;
};

}  // namespace strata::server
