#pragma once
// The dynamic value of the chat-template interpreter. It mirrors the Python objects that Jinja2
// hands around, because the expected renders show Python semantics: `str()` of a dict prints its
// repr, `True`/`None` print capitalized, dicts keep insertion order, `1 == 1.0`, and a missing
// key is Jinja's lenient `Undefined` rather than an error.
//
//   Value d = Value::dict();
//   d.dict_set(Value("role"), Value("user"));
//   python_str(d);                       // "{'role': 'user'}"
//   Value u = Value::undefined("'x' is undefined");
//   u.truthy();                          // false; python_str(u) == ""
//
// Containers are shared by reference, like Python objects: copying a Value copies a pointer.
// Only namespaces and generators are ever mutated after construction (the template sandbox is
// immutable), so sharing is safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::chat_template {

class Value;
using ValueList = std::vector<Value>;

// The arguments of a call, filter or test: positional first, then keyword (in source order).
struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;

    // The argument at `position`, or the keyword argument `name`; null when neither was given.
    const Value* get(size_t position, std::string_view name) const;
    // The keyword argument `name` only (for keyword-only parameters such as map(attribute=)).
    const Value* keyword_only(std::string_view name) const;
};

using NativeFunction = std::function<Value(const CallArgs&)>;

enum class Kind : uint8_t {
    undefined,   // jinja2.Undefined: prints "", is falsy, raises on attribute/arithmetic
    none,
    boolean,
    integer,
    floating,
    string,      // UTF-8 bytes; `safe` marks markupsafe.Markup (from |safe)
    list,
    tuple,       // (key, value) pairs from items(); prints with parentheses
    dict,        // insertion-ordered, like Python 3.7+ dicts
    generator,   // one-shot iterator: results of map/select/reject/items filters
    namespace_,  // namespace(): the one mutable object a template may assign into
    callable,    // macros, builtins, bound methods
};

// The Python exception class an error is reported as; it decides the wording in the messages.
enum class ErrorType : uint8_t {
    template_error,   // raise_exception(msg) from the template itself
    undefined_error,  // jinja2.exceptions.UndefinedError
    security_error,   // jinja2.sandbox.SecurityError
    type_error,
    value_error,
    zero_division_error,
    runtime_error,    // jinja2.exceptions.TemplateRuntimeError
    syntax_error,     // jinja2.exceptions.TemplateSyntaxError
    assertion_error,  // jinja2.exceptions.TemplateAssertionError (unknown filter at compile time)
};
const char* error_type_name(ErrorType type);

// The internal failure signal of the interpreter. Any expression may raise in Python, so the
// evaluator propagates failures as this exception and the public API (template.h) turns it into
// a Status at its boundary; threading a Result through every node would double the code.
struct TemplateFailure {
    ErrorType type;
    std::string message;
    int line = 0;  // 1-based template line; 0 until the evaluator attributes it to a node
};
[[noreturn]] void raise(ErrorType type, std::string message);

struct ListData {
    ValueList items;
};
struct DictData {
    std::vector<std::pair<Value, Value>> entries;  // insertion order; lookup is linear (dicts are small)
};
struct GeneratorData {
    ValueList items;  // produced eagerly; `next` makes it one-shot like a Python generator
    size_t next = 0;
};
struct CallableData {
    std::string name;
    NativeFunction fn;
};
struct UndefinedData {
    std::string message;  // what UndefinedError (or SecurityError) says when the value is used
    ErrorType error = ErrorType::undefined_error;
};

class Value {
public:
    Value() : kind_(Kind::none) {}
    Value(bool b) : kind_(Kind::boolean), int_(b ? 1 : 0) {}                 // NOLINT: literal-like
    Value(int64_t i) : kind_(Kind::integer), int_(i) {}                      // NOLINT
    Value(int i) : kind_(Kind::integer), int_(i) {}                          // NOLINT
    Value(double f) : kind_(Kind::floating), float_(f) {}                    // NOLINT
    Value(std::string s, bool safe = false)                                  // NOLINT
        : kind_(Kind::string), safe_(safe), str_(std::make_shared<const std::string>(std::move(s))) {}
    Value(const char* s) : Value(std::string(s)) {}                          // NOLINT

    static Value none() { return Value(); }
    static Value undefined(std::string message, ErrorType error = ErrorType::undefined_error);
    static Value list(ValueList items = {});
    static Value tuple(ValueList items);
    static Value dict();
    static Value generator(ValueList items);
    static Value make_namespace();
    static Value callable(std::string name, NativeFunction fn);

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::undefined; }
    bool is_none() const { return kind_ == Kind::none; }
    bool is_bool() const { return kind_ == Kind::boolean; }
    bool is_int() const { return kind_ == Kind::integer; }
    bool is_float() const { return kind_ == Kind::floating; }
    // Python numbers: bool is an int subclass, so True + 1 == 2.
    bool is_number() const { return kind_ == Kind::boolean || kind_ == Kind::integer || kind_ == Kind::floating; }
    bool is_string() const { return kind_ == Kind::string; }
    bool is_safe() const { return safe_; }
    bool is_list() const { return kind_ == Kind::list; }
    bool is_sequence() const { return kind_ == Kind::list || kind_ == Kind::tuple; }  // list or tuple
    bool is_dict() const { return kind_ == Kind::dict; }
    bool is_tuple() const { return kind_ == Kind::tuple; }
    bool is_generator() const { return kind_ == Kind::generator; }
    bool is_namespace() const { return kind_ == Kind::namespace_; }
    bool is_callable() const { return kind_ == Kind::callable; }

    bool as_bool() const { return int_ != 0; }
    int64_t as_int() const { return int_; }  // valid for boolean and integer
    double as_double() const { return kind_ == Kind::floating ? float_ : static_cast<double>(int_); }
    const std::string& as_string() const { return *str_; }
    const ValueList& items() const { return list_->items; }          // list or tuple
    const DictData& dict_data() const { return *dict_; }              // dict or namespace
    DictData& mutable_dict_data() const { return *dict_; }            // namespace assignment
    GeneratorData& generator_data() const { return *gen_; }
    const CallableData& callable_data() const { return *fn_; }
    const UndefinedData& undefined_data() const { return *undef_; }

    // Dict helpers (also used on namespaces). dict_find returns null when the key is absent.
    const Value* dict_find(const Value& key) const;
    const Value* dict_find(std::string_view key) const;
    void dict_set(Value key, Value value) const;  // only while building, or on a namespace

    bool truthy() const;
    // Raises the UndefinedError this Undefined stands for.
    [[noreturn]] void fail_undefined() const;

private:
    Kind kind_;
    bool safe_ = false;
    int64_t int_ = 0;
    double float_ = 0.0;
    std::shared_ptr<const std::string> str_;
    std::shared_ptr<ListData> list_;
    std::shared_ptr<DictData> dict_;
    std::shared_ptr<GeneratorData> gen_;
    std::shared_ptr<const CallableData> fn_;
    std::shared_ptr<const UndefinedData> undef_;
};

// Python's type(x).__name__, as it appears in TypeError messages ("str", "NoneType", "dict").
std::string python_type_name(const Value& v);
// Jinja's object_type_repr, used in Undefined messages ("dict object", "None").
std::string object_type_repr(const Value& v);

// Python str(x) and repr(x). str of Undefined is "" (the lenient default).
std::string python_str(const Value& v);
std::string python_repr(const Value& v);
// Python float.__repr__: shortest round-trip digits, "1e-07", "150.0", "inf".
std::string python_float_repr(double f);

// Python ==; never raises. Undefined equals only Undefined.
bool python_equal(const Value& a, const Value& b);
// Python <, for sort and comparisons; raises TypeError on unorderable types.
bool python_less(const Value& a, const Value& b, const char* op = "<");

// Materializes anything iterable (list, tuple, dict keys, string characters, generator,
// Undefined as empty); raises TypeError "'int' object is not iterable" otherwise.
// Consumes a generator, as Python does.
ValueList iterate(const Value& v);

}  // namespace strata::chat_template
