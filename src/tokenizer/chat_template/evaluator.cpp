#include "tokenizer/chat_template/evaluator.h"
#include "tokenizer/chat_template/stack_guard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <unordered_map>

#include "core/calendar.h"
#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/operators.h"

namespace strata::chat_template {
namespace {

struct Scope {
    std::unordered_map<std::string, Value> vars;
    std::shared_ptr<Scope> parent;

    const Value* find(const std::string& name) const {
        for (const Scope* s = this; s; s = s->parent.get()) {
            auto it = s->vars.find(name);
            if (it != s->vars.end()) return &it->second;
        }
        return nullptr;
    }
};
using ScopePtr = std::shared_ptr<Scope>;

ScopePtr child_of(const ScopePtr& parent) {
    auto s = std::make_shared<Scope>();
    s->parent = parent;
    return s;
}

enum class Flow { normal, break_loop, continue_loop };

// Python's recursion limit stands behind Jinja; a bound here turns runaway recursive macros into
// an error instead of a stack overflow.
constexpr int kMaxMacroDepth = 256;

// Real chat templates execute a few thousand statements and print kilobytes. These bounds turn a
// template that would run for hours or fill memory (nested `range(100000)` loops) into an error.
constexpr int64_t kMaxStatements = 2'000'000;
constexpr size_t kMaxOutputBytes = size_t(64) << 20;

// Attributes the innermost node's line to a failure that has none yet.
template <typename Fn>
auto at_line(int line, Fn&& fn) -> decltype(fn()) {
    try {
        return fn();
    } catch (TemplateFailure& failure) {
        if (failure.line == 0) failure.line = line;
        throw;
    }
}

std::tm parse_clock(const RenderClock& clock) {
    std::tm tm{};
    if (!clock.now) {
        return local_calendar(std::time(nullptr));
    }
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    char sep = 'T';
    int n = std::sscanf(clock.now->c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d", &y, &mo, &d, &sep, &h, &mi, &s);
    if (n != 3 && n < 6) {
        raise(ErrorType::value_error,
              fmt::format("strftime_now: expected an ISO time like 2026-01-15T00:00:00, got '{}'", *clock.now));
    }
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    return utc_calendar(utc_time_of(tm));  // normalizes and fills weekday / day of year
}

class Renderer {
public:
    Renderer(const Value& variables, const RenderClock& clock) : clock_(parse_clock(clock)) {
        globals_ = std::make_shared<Scope>();
        install_globals();
        for (const auto& [key, value] : variables.dict_data().entries) globals_->vars[python_str(key)] = value;
    }

    std::string run(const Program& program) {
        std::string out;
        exec_body(program.body, child_of(globals_), out);
        return out;
    }

private:
    void install_globals() {
        globals_->vars["raise_exception"] = Value::callable("raise_exception", [](const CallArgs& args) -> Value {
            const Value* message = args.get(0, "message");
            raise(ErrorType::template_error, message ? python_str(*message) : "");
        });
        globals_->vars["strftime_now"] = Value::callable("strftime_now", [this](const CallArgs& args) {
            const Value* format = args.get(0, "format");
            std::string f = format ? arg_string(*format, "strftime_now") : "";
            char buf[512];
            size_t n = f.empty() ? 0 : std::strftime(buf, sizeof buf, f.c_str(), &clock_);
            return Value(std::string(buf, n));
        });
        globals_->vars["namespace"] = Value::callable("namespace", [](const CallArgs& args) {
            Value ns = Value::make_namespace();
            for (const Value& p : args.positional) {
                if (!p.is_dict() && !p.is_namespace()) raise(ErrorType::type_error, "namespace() takes mappings and keyword arguments");
                for (const auto& [k, v] : p.dict_data().entries) ns.dict_set(k, v);
            }
            for (const auto& [k, v] : args.keyword) ns.dict_set(Value(k), v);
            return ns;
        });
        globals_->vars["dict"] = Value::callable("dict", [](const CallArgs& args) {
            Value d = Value::dict();
            for (const Value& p : args.positional) {
                if (!p.is_dict() && !p.is_namespace()) raise(ErrorType::type_error, "dict() takes mappings and keyword arguments");
                for (const auto& [k, v] : p.dict_data().entries) d.dict_set(k, v);
            }
            for (const auto& [k, v] : args.keyword) d.dict_set(Value(k), v);
            return d;
        });
        globals_->vars["range"] = Value::callable("range", [](const CallArgs& args) {
            int64_t start = 0, stop = 0, step = 1;
            const auto& p = args.positional;
            if (p.size() == 1) {
                stop = arg_int(p[0], "range");
            } else if (p.size() >= 2) {
                start = arg_int(p[0], "range");
                stop = arg_int(p[1], "range");
                if (p.size() >= 3) step = arg_int(p[2], "range");
            } else {
                raise(ErrorType::type_error, "range expected at least 1 argument, got 0");
            }
            if (step == 0) raise(ErrorType::value_error, "range() arg 3 must not be zero");
            ValueList items;
            for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                // The sandbox's MAX_RANGE.
                if (items.size() >= 100000) {
                    raise(ErrorType::runtime_error,
                          "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
                }
                items.emplace_back(i);
            }
            return Value::list(std::move(items));
        });
    }

    // ---- statements ----

    Flow exec_body(const Body& body, const ScopePtr& scope, std::string& out) {
        if (stack_.exceeded()) raise(ErrorType::runtime_error, "template nested too deeply (maximum recursion depth exceeded)");
        for (const StmtPtr& stmt : body) {
            Flow flow = at_line(stmt->line, [&] { return exec(*stmt, scope, out); });
            if (flow != Flow::normal) return flow;
        }
        return Flow::normal;
    }

    // Statements and loop iterations both count: an empty loop body still costs an iteration.
    void count_step() {
        if (++statements_ > kMaxStatements) {
            raise(ErrorType::runtime_error,
                  fmt::format("template too expensive: more than {} statements and loop iterations", kMaxStatements));
        }
    }

    Flow exec(const Stmt& s, const ScopePtr& scope, std::string& out) {
        count_step();
        if (out.size() > kMaxOutputBytes) {
            raise(ErrorType::runtime_error, fmt::format("template output too large: more than {} bytes", kMaxOutputBytes));
        }
        switch (s.kind) {
            case StmtKind::text: out += s.text; return Flow::normal;
            case StmtKind::output: out += python_str(eval(*s.expr, scope)); return Flow::normal;
            case StmtKind::if_:
                for (const auto& [cond, branch] : s.branches) {
                    if (eval(*cond, scope).truthy()) return exec_body(branch, scope, out);
                }
                return exec_body(s.else_body, scope, out);
            case StmtKind::for_: exec_for(s, scope, out); return Flow::normal;
            case StmtKind::set: exec_set(s, scope); return Flow::normal;
            case StmtKind::set_block: {
                std::string text;
                exec_body(s.body, child_of(scope), text);
                scope->vars[s.targets[0]] = apply_filter_chain(s.filters, Value(std::move(text)), scope);
                return Flow::normal;
            }
            case StmtKind::macro: scope->vars[s.name] = make_macro(s, scope); return Flow::normal;
            case StmtKind::filter_block: {
                std::string text;
                exec_body(s.body, child_of(scope), text);
                out += python_str(apply_filter_chain(s.filters, Value(std::move(text)), scope));
                return Flow::normal;
            }
            case StmtKind::break_: return Flow::break_loop;
            case StmtKind::continue_: return Flow::continue_loop;
        }
        return Flow::normal;
    }

    Value apply_filter_chain(const std::vector<ExprPtr>& filters, Value value, const ScopePtr& scope) {
        for (const ExprPtr& f : filters) value = run_filter(*f, std::move(value), scope);
        return value;
    }

    // Binds `for a, b in ...` / `set a, b = ...` targets; one target takes the whole value.
    static void bind_targets(const std::vector<std::string>& targets, const Value& value, Scope& scope) {
        if (targets.size() == 1) {
            scope.vars[targets[0]] = value;
            return;
        }
        ValueList parts = iterate(value);
        if (parts.size() < targets.size()) {
            raise(ErrorType::value_error, fmt::format("not enough values to unpack (expected {}, got {})",
                                                      targets.size(), parts.size()));
        }
        if (parts.size() > targets.size()) {
            raise(ErrorType::value_error, fmt::format("too many values to unpack (expected {})", targets.size()));
        }
        for (size_t i = 0; i < targets.size(); ++i) scope.vars[targets[i]] = parts[i];
    }

    void exec_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
        ValueList items = iterate(eval(*s.expr, scope));
        if (s.loop_filter) {
            // The loop filter runs before the loop, so loop.length/last count only kept items.
            ValueList kept;
            for (const Value& item : items) {
                count_step();
                ScopePtr probe = child_of(scope);
                bind_targets(s.targets, item, *probe);
                if (eval(*s.loop_filter, probe).truthy()) kept.push_back(item);
            }
            items = std::move(kept);
        }
        const int64_t length = static_cast<int64_t>(items.size());
        for (int64_t i = 0; i < length; ++i) {
            count_step();
            ScopePtr iteration = child_of(scope);  // a fresh scope per iteration, as in Jinja
            bind_targets(s.targets, items[static_cast<size_t>(i)], *iteration);
            Value loop = Value::dict();
            loop.dict_set(Value("index"), Value(i + 1));
            loop.dict_set(Value("index0"), Value(i));
            loop.dict_set(Value("revindex"), Value(length - i));
            loop.dict_set(Value("revindex0"), Value(length - i - 1));
            loop.dict_set(Value("first"), Value(i == 0));
            loop.dict_set(Value("last"), Value(i == length - 1));
            loop.dict_set(Value("length"), Value(length));
            loop.dict_set(Value("depth"), Value(int64_t{1}));
            loop.dict_set(Value("depth0"), Value(int64_t{0}));
            // Absent keys read as Undefined: previtem on the first pass, nextitem on the last.
            if (i > 0) loop.dict_set(Value("previtem"), items[static_cast<size_t>(i - 1)]);
            if (i + 1 < length) loop.dict_set(Value("nextitem"), items[static_cast<size_t>(i + 1)]);
            loop.dict_set(Value("cycle"), Value::callable("cycle", [i](const CallArgs& args) {
                if (args.positional.empty()) raise(ErrorType::type_error, "no items for cycling given");
                return args.positional[static_cast<size_t>(i) % args.positional.size()];
            }));
            iteration->vars["loop"] = loop;
            if (exec_body(s.body, iteration, out) == Flow::break_loop) break;
        }
        if (length == 0) exec_body(s.else_body, child_of(scope), out);
    }

    void exec_set(const Stmt& s, const ScopePtr& scope) {
        Value value = eval(*s.expr, scope);
        if (s.namespace_attribute.empty()) {
            bind_targets(s.targets, value, *scope);
            return;
        }
        const Value* ns = scope->find(s.targets[0]);
        if (!ns || !ns->is_namespace()) {
            raise(ErrorType::runtime_error, "cannot assign attribute on non-namespace object");
        }
        ns->dict_set(Value(s.namespace_attribute), std::move(value));
    }

    Value make_macro(const Stmt& s, const ScopePtr& scope) {
        // A weak reference: the scope holds the macro, so a strong one would be a cycle.
        std::weak_ptr<Scope> definition = scope;
        return Value::callable(s.name, [this, &s, definition](const CallArgs& args) {
            return call_macro(s, definition.lock(), args);
        });
    }

    Value call_macro(const Stmt& s, const ScopePtr& definition, const CallArgs& args) {
        if (args.positional.size() > s.params.size()) {
            raise(ErrorType::type_error,
                  fmt::format("macro '{}' takes not more than {} argument(s)", s.name, s.params.size()));
        }
        for (const auto& [key, value] : args.keyword) {
            if (std::find(s.params.begin(), s.params.end(), key) == s.params.end()) {
                raise(ErrorType::type_error, fmt::format("macro '{}' takes no keyword argument '{}'", s.name, key));
            }
        }
        if (macro_depth_ >= kMaxMacroDepth) raise(ErrorType::runtime_error, "maximum recursion depth exceeded");
        ScopePtr frame = child_of(definition ? definition : globals_);
        for (size_t i = 0; i < s.params.size(); ++i) {
            if (const Value* given = args.get(i, s.params[i])) {
                frame->vars[s.params[i]] = *given;
            } else if (s.defaults[i]) {
                frame->vars[s.params[i]] = eval(*s.defaults[i], frame);
            } else {
                frame->vars[s.params[i]] = Value::undefined(fmt::format("parameter '{}' was not provided", s.params[i]));
            }
        }
        std::string text;
        ++macro_depth_;
        try {
            exec_body(s.body, frame, text);
        } catch (...) {
            --macro_depth_;
            throw;
        }
        --macro_depth_;
        return Value(std::move(text));
    }

    // ---- expressions ----

    Value eval(const Expr& e, const ScopePtr& scope) {
        if (stack_.exceeded()) raise(ErrorType::runtime_error, "template nested too deeply (maximum recursion depth exceeded)");
        return at_line(e.line, [&] { return eval_node(e, scope); });
    }

    CallArgs eval_args(const Expr& e, const ScopePtr& scope) {
        CallArgs args;
        for (const ExprPtr& a : e.args) args.positional.push_back(eval(*a, scope));
        for (const auto& [key, value] : e.kwargs) args.keyword.emplace_back(key, eval(*value, scope));
        return args;
    }

    Value run_filter(const Expr& f, Value input, const ScopePtr& scope) {
        CallArgs args = eval_args(f, scope);
        return apply_filter(f.name, input, args);
    }

    static std::optional<int64_t> slice_bound(const Value& v) {
        if (v.is_none()) return std::nullopt;
        if (v.is_int() || v.is_bool()) return v.as_int();
        raise(ErrorType::type_error, "slice indices must be integers or None or have an __index__ method");
    }

    Value eval_node(const Expr& e, const ScopePtr& scope) {
        switch (e.kind) {
            case ExprKind::literal: return e.literal;
            case ExprKind::name: {
                if (const Value* v = scope->find(e.name)) return *v;
                return Value::undefined(fmt::format("'{}' is undefined", e.name));
            }
            case ExprKind::list:
            case ExprKind::tuple: {
                ValueList items;
                for (const ExprPtr& a : e.args) items.push_back(eval(*a, scope));
                return e.kind == ExprKind::list ? Value::list(std::move(items)) : Value::tuple(std::move(items));
            }
            case ExprKind::dict: {
                Value d = Value::dict();
                for (size_t i = 0; i + 1 < e.args.size(); i += 2) d.dict_set(eval(*e.args[i], scope), eval(*e.args[i + 1], scope));
                return d;
            }
            case ExprKind::attribute: return get_attribute(eval(*e.target, scope), e.name);
            case ExprKind::subscript: {
                Value obj = eval(*e.target, scope);
                return get_item(obj, eval(*e.args[0], scope));
            }
            case ExprKind::slice: {
                Value obj = eval(*e.target, scope);
                std::optional<int64_t> bounds[3];
                for (size_t i = 0; i < 3; ++i) {
                    if (e.args[i]) bounds[i] = slice_bound(eval(*e.args[i], scope));
                }
                return get_slice(obj, bounds[0], bounds[1], bounds[2]);
            }
            case ExprKind::call: {
                Value callee = eval(*e.target, scope);
                CallArgs args = eval_args(e, scope);
                if (callee.is_undefined()) callee.fail_undefined();
                if (!callee.is_callable()) {
                    raise(ErrorType::type_error, fmt::format("'{}' object is not callable", python_type_name(callee)));
                }
                return callee.callable_data().fn(args);
            }
            case ExprKind::filter: return run_filter(e, eval(*e.target, scope), scope);
            case ExprKind::test: {
                Value input = eval(*e.target, scope);
                CallArgs args = eval_args(e, scope);
                return Value(apply_test(e.name, input, args) != e.negated);
            }
            case ExprKind::unary: {
                Value v = eval(*e.target, scope);
                if (e.name == "not") return Value(!v.truthy());
                return unary_op(e.name, v);
            }
            case ExprKind::binary: {
                Value left = eval(*e.target, scope);
                // and/or return an operand, as in Python: `content or ''` is the content.
                if (e.name == "and") return left.truthy() ? eval(*e.args[0], scope) : left;
                if (e.name == "or") return left.truthy() ? left : eval(*e.args[0], scope);
                Value right = eval(*e.args[0], scope);
                if (e.name == "~") return Value(python_str(left) + python_str(right));
                return binary_op(e.name, left, right);
            }
            case ExprKind::compare: {
                Value left = eval(*e.target, scope);
                for (size_t i = 0; i < e.ops.size(); ++i) {
                    Value right = eval(*e.args[i], scope);
                    if (!compare_op(e.ops[i], left, right)) return Value(false);
                    left = std::move(right);
                }
                return Value(true);
            }
            case ExprKind::condition: {
                if (eval(*e.target, scope).truthy()) return eval(*e.args[0], scope);
                if (e.args[1]) return eval(*e.args[1], scope);
                return Value::undefined(fmt::format(
                    "the inline if-expression on line {} evaluated to false and no else section was defined.", e.line));
            }
        }
        return Value::none();
    }

    std::tm clock_;
    ScopePtr globals_;
    int macro_depth_ = 0;
    int64_t statements_ = 0;
    StackGuard stack_;  // the render starts with the Renderer
};

}  // namespace

std::string render_program(const Program& program, const Value& variables, const RenderClock& clock) {
    Renderer renderer(variables, clock);
    return renderer.run(program);
}

}  // namespace strata::chat_template
