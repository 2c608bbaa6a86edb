#pragma once
// A non-owning reference to a callable, for calls that run it before they return (the thread
// pool's parallel_for). Unlike std::function it never copies the callable, so passing a lambda
// with many captures allocates nothing: the token loop must not allocate.
//
//   void run(FunctionRef<void(int)> fn) { fn(3); }
//   run([&](int i) { total += i; });   // the lambda outlives the call: fine

#include <memory>
#include <type_traits>
#include <utility>

namespace strata {

template <typename Signature> class FunctionRef;

template <typename R, typename... Args> class FunctionRef<R(Args...)> {
public:
    template <typename F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
    FunctionRef(F&& fn) noexcept  // NOLINT: converts implicitly, as std::function does
        : object_(const_cast<void*>(static_cast<const void*>(std::addressof(fn)))),
          call_([](void* object, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
    void* object_;
    R (*call_)(void*, Args...);
};

}  // namespace strata
