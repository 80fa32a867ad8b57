// The analyzer names fixes and their kind; the compiler applies them. Both must mean the same thing.
#include <gtest/gtest.h>

#include "torchscope/analyzer/FixIds.h"
#include "torchscope/compiler/FixCatalog.h"

namespace torchscope::compiler {
namespace {

TEST(FixKindsAgree, EveryAnalyzerFixIsInTheCatalogueWithTheSameKind) {
  for (std::string_view id : analyzer::fix::kAll) {
    const FixSpec* spec = findFix(id);
    ASSERT_NE(spec, nullptr) << id << " is proposed by the analyzer but unknown to the compiler";
    // Advice has no automatic form: the user edits the source, which is what the analyzer calls it.
    const std::string_view expected = spec->kind == FixKind::kAdvice ? analyzer::fix::kSource : kindName(spec->kind);
    EXPECT_EQ(analyzer::fix::kindOf(id), expected) << id;
  }
}

TEST(FixKindsAgree, TheCatalogueHasNoFixTheAnalyzerCannotPropose) {
  for (const FixSpec& spec : fixCatalog()) {
    bool known = false;
    for (std::string_view id : analyzer::fix::kAll) known = known || id == spec.id;
    EXPECT_TRUE(known) << spec.id;
  }
}

}  // namespace
}  // namespace torchscope::compiler
