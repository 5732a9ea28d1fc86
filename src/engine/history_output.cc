#include "engine/history_output.h"

#include "store/history_writer.h"

namespace gpuwatch::engine {
namespace {

class SqliteHistory final : public HistoryOutput {
 public:
  explicit SqliteHistory(std::unique_ptr<store::HistoryWriter> writer)
      : writer_(std::move(writer)) {}
  ~SqliteHistory() override { (void)writer_->Flush(); }

  void Append(std::shared_ptr<const Snapshot> snapshot) override {
    writer_->Append(std::move(snapshot));
  }
  void Append(const Event& event) override { writer_->Append(event); }
  void AppendMark(std::chrono::system_clock::time_point time, std::string_view kind,
                  std::string_view value, std::optional<double> number) override {
    store::Mark m;
    m.time = time;
    m.kind = kind == "step"    ? store::Mark::Kind::kStep
             : kind == "epoch" ? store::Mark::Kind::kEpoch
                               : store::Mark::Kind::kPhase;
    m.value = number;
    if (!number) m.label = value;
    writer_->AppendMark(std::move(m));
  }

 private:
  std::unique_ptr<store::HistoryWriter> writer_;
};

}  // namespace

Result<std::unique_ptr<HistoryOutput>> HistoryOutput::Open(const std::string& path, Warn warn) {
  auto writer = store::HistoryWriter::Open(path, store::HistoryOptions{},
                                           [warn](const Status& s) { warn(s.message()); });
  if (!writer) return writer.error();
  return std::unique_ptr<HistoryOutput>(new SqliteHistory(std::move(*writer)));
}

}  // namespace gpuwatch::engine
