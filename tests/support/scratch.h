#pragma once
// A private scratch folder for a test's temporary files (never inside the test data, which is
// read-only in CI). Removed when the object goes out of scope.
//
//   ScratchDir dir;
//   std::string p = dir.path("out.gguf");

#include <string>

namespace strata::test {

class ScratchDir {
public:
    ScratchDir();
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    std::string path(const std::string& name) const { return root_ + "/" + name; }
    const std::string& root() const { return root_; }

private:
    std::string root_;
};

}  // namespace strata::test
