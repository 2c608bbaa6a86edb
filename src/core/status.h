#pragma once
// Error values for everything that touches the outside world (files, network, user input).
//
// Messages follow one shape: "what failed: expected X, got Y (what to do)". Broken internal
// invariants are not Status values; they abort through STRATA_CHECK (core/check.h).
//
//   Result<int> parse(std::string_view s);
//   auto r = parse("12");
//   if (!r) return r.status();          // propagate
//   int v = *r;
//   return Status::error("bad magic: expected GGUF, got {:?}", magic);

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "core/check.h"

namespace strata {

class [[nodiscard]] Status {
public:
    Status() = default;
    static Status ok() { return Status(); }

    template <typename... Args>
    static Status error(fmt::format_string<Args...> format, Args&&... args) {
        Status s;
        s.message_ = fmt::format(format, std::forward<Args>(args)...);
        s.failed_ = true;
        return s;
    }
    static Status error_message(std::string message) {
        Status s;
        s.message_ = std::move(message);
        s.failed_ = true;
        return s;
    }

    bool is_ok() const { return !failed_; }
    explicit operator bool() const { return !failed_; }
    const std::string& message() const { return message_; }

    // Adds what was being done when the error happened: "reading x.gguf: <message>".
    Status with_context(std::string_view context) const {
        if (!failed_) return *this;
        return error_message(fmt::format("{}: {}", context, message_));
    }

private:
    std::string message_;
    bool failed_ = false;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
    Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
        STRATA_CHECK(!status_.is_ok(), "Result built from an ok Status without a value");
    }

    bool is_ok() const { return value_.has_value(); }
    explicit operator bool() const { return value_.has_value(); }
    const Status& status() const { return status_; }

    T& value() & {
        STRATA_CHECK(value_.has_value(), status_.message().c_str());
        return *value_;
    }
    const T& value() const& {
        STRATA_CHECK(value_.has_value(), status_.message().c_str());
        return *value_;
    }
    T&& value() && {
        STRATA_CHECK(value_.has_value(), status_.message().c_str());
        return std::move(*value_);
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

private:
    std::optional<T> value_;
    Status status_;
};

}  // namespace strata

// Propagates a failed Status (or the Status of a failed Result) to the caller.
#define STRATA_TRY(expr)                                        \
    do {                                                        \
        auto&& strata_try_value_ = (expr);                      \
        if (!strata_try_value_) return ::strata::detail::status_of(strata_try_value_); \
    } while (0)

// Binds the value of a Result to `lhs`, or returns its Status.
#define STRATA_ASSIGN_OR_RETURN(lhs, expr) STRATA_ASSIGN_OR_RETURN_IMPL(STRATA_CONCAT(strata_r_, __LINE__), lhs, expr)
#define STRATA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
    auto tmp = (expr);                               \
    if (!tmp) return tmp.status();                   \
    lhs = std::move(*tmp)
#define STRATA_CONCAT(a, b) STRATA_CONCAT_INNER(a, b)
#define STRATA_CONCAT_INNER(a, b) a##b

namespace strata::detail {
inline Status status_of(const Status& s) { return s; }
template <typename T>
Status status_of(const Result<T>& r) { return r.status(); }
}  // namespace strata::detail
