#include "analysis/sweep/run_verdict.h"

#include <gtest/gtest.h>

namespace gpuwatch::sweep {
namespace {

TEST(RunVerdict, StoppedAtTheBoundFits) {
  EXPECT_EQ(ClassifyRun({143, true, "", false}).verdict, RunVerdict::kFits);
}

TEST(RunVerdict, FinishingByItselfFits) {
  EXPECT_EQ(ClassifyRun({0, false, "warning: something\n", false}).verdict, RunVerdict::kFits);
}

TEST(RunVerdict, TorchJaxAndCudaMessagesAreOutOfMemory) {
  for (const char* text :
       {"Traceback...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying",
        "RuntimeError: CUDA error: out of memory\n", "CUDA_ERROR_OUT_OF_MEMORY"}) {
    const Classified c = ClassifyRun({1, false, text, false});
    EXPECT_EQ(c.verdict, RunVerdict::kOom) << text;
    EXPECT_NE(c.reason.find("out of memory"), std::string::npos) << c.reason;
  }
  EXPECT_EQ(OomLine("a\nb RESOURCE_EXHAUSTED c\nd"), "b RESOURCE_EXHAUSTED c");
}

TEST(RunVerdict, TheTorchAdaptersReportIsOutOfMemory) {
  const Classified c = ClassifyRun({1, false, "", true});
  EXPECT_EQ(c.verdict, RunVerdict::kOom);
  EXPECT_NE(c.reason.find("OOM report"), std::string::npos);
}

TEST(RunVerdict, OtherFailuresAreFailuresWithTheirReason) {
  Classified c = ClassifyRun({2, false, "ModuleNotFoundError: No module named 'torch'\n", false});
  EXPECT_EQ(c.verdict, RunVerdict::kFailed);
  EXPECT_EQ(c.reason, "exit status 2 without an out-of-memory message");
  c = ClassifyRun({137, false, "", false});
  EXPECT_EQ(c.verdict, RunVerdict::kFailed);
  EXPECT_NE(c.reason.find("signal 9"), std::string::npos);
  EXPECT_EQ(ClassifyRun({std::nullopt, false, "", false}).verdict, RunVerdict::kFailed);
}

}  // namespace
}  // namespace gpuwatch::sweep
