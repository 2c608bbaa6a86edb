// The engine child on Windows (server/engine_process.h says how it differs from POSIX).
#if defined(_WIN32)
#include "server/engine_process.h"

#include <windows.h>

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "server/windows_command_line.h"

namespace strata::server {
namespace {

// TerminateProcess's exit code for the supervisor's kill: 128 + 9, as a shell reports SIGKILL.
constexpr UINT kKilledExitCode = 137;

std::string last_error_text(DWORD code = GetLastError()) {
    char* text = nullptr;
    FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0,
                   reinterpret_cast<char*>(&text), 0, nullptr);
    std::string out = text ? text : fmt::format("error {}", code);
    if (text) LocalFree(text);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.')) out.pop_back();
    return out;
}

std::wstring wide(const std::string& utf8) {
    const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, nullptr, 0);
    std::wstring out(static_cast<size_t>(n > 0 ? n : 1), L'\0');
    if (n > 0) MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, out.data(), n);
    out.resize(out.size() - 1);
    return out;
}

std::string utf8(const std::wstring& text) {
    const int n = WideCharToMultiByte(CP_UTF8, 0, text.c_str(), -1, nullptr, 0, nullptr, nullptr);
    std::string out(static_cast<size_t>(n > 0 ? n : 1), '\0');
    if (n > 0) WideCharToMultiByte(CP_UTF8, 0, text.c_str(), -1, out.data(), n, nullptr, nullptr);
    out.resize(out.size() - 1);
    return out;
}

// How a Windows process ended, from its exit code: the NTSTATUS of a crash by name.
std::string describe_exit_code(DWORD code) {
    switch (code) {
        case kKilledExitCode: return fmt::format("killed (exit code {})", code);
        case 0xC0000005: return "crashed: access violation (0xC0000005)";
        case 0xC00000FD: return "crashed: stack overflow (0xC00000FD)";
        case 0xC0000409: return "crashed: fail-fast or stack buffer overrun (0xC0000409)";
        case 0xC000001D: return "crashed: illegal instruction (0xC000001D)";
        case 0xC0000017: return "crashed: out of memory (0xC0000017)";
        case 0xC000013A: return "stopped by Ctrl+C (0xC000013A)";
        case 3: return "exit code 3 (abort)";
        default: return code >= 0xC0000000 ? fmt::format("crashed (0x{:08X})", code) : fmt::format("exit code {}", code);
    }
}

HANDLE as_handle(void* h) { return static_cast<HANDLE>(h); }
void close(void*& h) {
    if (h) CloseHandle(as_handle(h));
    h = nullptr;
}

// An inheritable duplicate of a standard handle, or null where there is none.
HANDLE inheritable_std_handle(DWORD which) {
    HANDLE h = GetStdHandle(which);
    if (h == nullptr || h == INVALID_HANDLE_VALUE) return nullptr;
    HANDLE dup = nullptr;
    if (!DuplicateHandle(GetCurrentProcess(), h, GetCurrentProcess(), &dup, 0, TRUE, DUPLICATE_SAME_ACCESS)) return nullptr;
    return dup;
}

}  // namespace

Result<std::unique_ptr<EngineProcess>> EngineProcess::start(const std::vector<std::string>& argv) {
    SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
    HANDLE report_read = nullptr, report_write = nullptr, stop_read = nullptr, stop_write = nullptr;
    if (!CreatePipe(&report_read, &report_write, &inherit, 0)) return Status::error("the engine's report pipe: {}", last_error_text());
    if (!CreatePipe(&stop_read, &stop_write, &inherit, 0)) {
        const std::string why = last_error_text();
        CloseHandle(report_read), CloseHandle(report_write);
        return Status::error("the engine's stop pipe: {}", why);
    }
    // The supervisor's ends stay here.
    SetHandleInformation(report_read, HANDLE_FLAG_INHERIT, 0);
    SetHandleInformation(stop_write, HANDLE_FLAG_INHERIT, 0);
    HANDLE std_in = inheritable_std_handle(STD_INPUT_HANDLE), std_out = inheritable_std_handle(STD_OUTPUT_HANDLE),
           std_err = inheritable_std_handle(STD_ERROR_HANDLE);
    auto close_all = [&] {
        for (HANDLE h : {report_read, report_write, stop_read, stop_write, std_in, std_out, std_err})
            if (h) CloseHandle(h);
    };

    std::wstring exe(32768, L'\0');
    const DWORD exe_len = GetModuleFileNameW(nullptr, exe.data(), static_cast<DWORD>(exe.size()));
    if (exe_len == 0 || exe_len >= exe.size()) {
        close_all();
        return Status::error("finding this executable to start the engine: {}", last_error_text());
    }
    exe.resize(exe_len);
    std::vector<std::string> args = argv;
    if (args.empty()) args.push_back("");
    args[0] = utf8(exe);
    args.insert(args.end(), {"--engine-report-fd", std::to_string(reinterpret_cast<intptr_t>(report_write)), "--engine-stop-fd",
                             std::to_string(reinterpret_cast<intptr_t>(stop_read))});
    std::wstring command_line = wide(windows_command_line(args));

    // Only these handles reach the child: not the supervisor's listening socket, nor another
    // engine's pipes.
    std::vector<HANDLE> inherited = {report_write, stop_read};
    for (HANDLE h : {std_in, std_out, std_err})
        if (h) inherited.push_back(h);
    SIZE_T attr_bytes = 0;
    InitializeProcThreadAttributeList(nullptr, 1, 0, &attr_bytes);
    std::vector<unsigned char> attr_storage(attr_bytes);
    auto* attrs = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attr_storage.data());
    STARTUPINFOEXW startup{};
    startup.StartupInfo.cb = sizeof(startup);
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    startup.StartupInfo.hStdInput = std_in;
    startup.StartupInfo.hStdOutput = std_out;
    startup.StartupInfo.hStdError = std_err;
    const bool attrs_ok = InitializeProcThreadAttributeList(attrs, 1, 0, &attr_bytes) &&
                          UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited.data(),
                                                    inherited.size() * sizeof(HANDLE), nullptr, nullptr);
    if (attrs_ok) startup.lpAttributeList = attrs;

    // Suspended until it is in the job, so not one instruction runs outside it. A new process group:
    // the user's Ctrl+C reaches the supervisor, which then stops the engine through its pipe.
    PROCESS_INFORMATION info{};
    const DWORD flags = CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP | CREATE_UNICODE_ENVIRONMENT |
                        (attrs_ok ? EXTENDED_STARTUPINFO_PRESENT : 0);
    const BOOL created = CreateProcessW(exe.c_str(), command_line.data(), nullptr, nullptr, TRUE, flags, nullptr, nullptr,
                                        &startup.StartupInfo, &info);
    const std::string create_error = created ? "" : last_error_text();
    if (attrs_ok) DeleteProcThreadAttributeList(attrs);
    // The child has its copies now; the supervisor keeps only its own ends.
    for (HANDLE h : {report_write, stop_read, std_in, std_out, std_err})
        if (h) CloseHandle(h);
    if (!created) {
        CloseHandle(report_read), CloseHandle(stop_write);
        return Status::error("starting the engine process: {}", create_error);
    }

    HANDLE job = CreateJobObjectW(nullptr, nullptr);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (!job || !SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof(limits)) ||
        !AssignProcessToJobObject(job, info.hProcess)) {
        // Without the job the engine would outlive a crashed supervisor: not started at all.
        const std::string why = last_error_text();
        TerminateProcess(info.hProcess, kKilledExitCode);
        WaitForSingleObject(info.hProcess, INFINITE);
        for (HANDLE h : {info.hProcess, info.hThread, job, report_read, stop_write})
            if (h) CloseHandle(h);
        return Status::error("putting the engine in a job object (so that it ends with the supervisor): {}", why);
    }
    ResumeThread(info.hThread);
    CloseHandle(info.hThread);

    auto engine = std::unique_ptr<EngineProcess>(new EngineProcess(static_cast<int>(info.dwProcessId), -1));
    engine->process_ = info.hProcess;
    engine->job_ = job;
    engine->report_pipe_ = report_read;
    engine->stop_pipe_ = stop_write;
    return engine;
}

Status EngineProcess::report_port(int report_fd, int port) {
    HANDLE pipe = reinterpret_cast<HANDLE>(static_cast<intptr_t>(report_fd));
    const std::string line = fmt::format("port {}\n", port);
    DWORD written = 0;
    const bool ok = WriteFile(pipe, line.data(), static_cast<DWORD>(line.size()), &written, nullptr) && written == line.size();
    CloseHandle(pipe);
    if (!ok) return Status::error("the engine could not report its port to the supervisor");
    return Status::ok();
}

void EngineProcess::watch_stop_pipe(int stop_fd, std::function<void()> on_stop) {
    HANDLE pipe = reinterpret_cast<HANDLE>(static_cast<intptr_t>(stop_fd));
    // Detached: it blocks in ReadFile for the process's life; the process ends when serving does.
    std::thread([pipe, on_stop = std::move(on_stop)] {
        char byte = 0;
        DWORD read = 0;
        ReadFile(pipe, &byte, 1, &read, nullptr);  // a line, or the pipe's end: both mean stop
        on_stop();
    }).detach();
}

int EngineProcess::own_pid() { return static_cast<int>(GetCurrentProcessId()); }

EngineProcess::~EngineProcess() {
    if (!ended_ && process_) {
        TerminateProcess(as_handle(process_), kKilledExitCode);
        wait();
    }
    close(report_pipe_);
    close(stop_pipe_);
    close(process_);
    close(job_);  // kills whatever is left in it
}

std::optional<int> EngineProcess::read_port(std::chrono::milliseconds timeout) {
    // Anonymous pipes have no waits with a timeout: peek, and sleep between peeks.
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (line.find('\n') == std::string::npos) {
        DWORD available = 0;
        if (!PeekNamedPipe(as_handle(report_pipe_), nullptr, 0, nullptr, &available, nullptr)) return std::nullopt;  // the child's end closed
        if (available == 0) {
            if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
            Sleep(10);
            continue;
        }
        char buf[64];
        DWORD n = 0;
        if (!ReadFile(as_handle(report_pipe_), buf, std::min<DWORD>(available, sizeof buf), &n, nullptr) || n == 0) return std::nullopt;
        line.append(buf, n);
    }
    int port = 0;
    if (std::sscanf(line.c_str(), "port %d", &port) != 1 || port <= 0 || port > 65535) return std::nullopt;
    return port;
}

std::optional<std::string> EngineProcess::poll_exit() {
    if (ended_ || !process_) return ended_;
    if (WaitForSingleObject(as_handle(process_), 0) == WAIT_OBJECT_0) {
        DWORD code = 0;
        GetExitCodeProcess(as_handle(process_), &code);
        ended_ = describe_exit_code(code);
    }
    return ended_;
}

std::string EngineProcess::wait() {
    if (!ended_ && process_) {
        WaitForSingleObject(as_handle(process_), INFINITE);
        poll_exit();
    }
    return ended_.value_or("lost");
}

void EngineProcess::request_stop() const {
    if (ended_ || !stop_pipe_) return;
    DWORD written = 0;
    WriteFile(as_handle(stop_pipe_), "stop\n", 5, &written, nullptr);
}

void EngineProcess::kill() const {
    if (!ended_ && process_) TerminateProcess(as_handle(process_), kKilledExitCode);
}

}  // namespace strata::server
#endif
