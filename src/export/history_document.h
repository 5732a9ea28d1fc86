// /api/v1/history's document from the SQLite tiers (serve --db).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>

#include "store/history_reader.h"

namespace gpuwatch {

nlohmann::json SeriesDocument(const store::Series& series, int device,
                              std::chrono::milliseconds step);

}  // namespace gpuwatch
