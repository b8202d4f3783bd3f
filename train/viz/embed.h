// Embedding geometry for `tapegpt embed`: cosine nearest neighbours of a
// vector among the rows of an embedding table, and the cosine similarity
// matrix of the position embeddings as an SVG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace viz {

struct Neighbour {
  int32_t id;
  double cosine;
};

// The k rows of table[V, C] with the largest cosine similarity to query[C],
// best first (ties by lower id), skipping the ids in `exclude`. Rows or a
// query of zero norm have cosine 0. Computed in double.
std::vector<Neighbour> nearest_rows(const float* table, int64_t V, int64_t C, const double* query,
                                    int64_t k, const std::vector<int32_t>& exclude = {});

// cos(row i, row j) of table[T, C] for all i, j: [T, T], in double.
std::vector<double> cosine_matrix(const float* table, int64_t T, int64_t C);

// The [T, T] matrix as an SVG heatmap (-1 red, 0 white, 1 blue) with axes
// labelled by position; `title` names the model and the encoding.
std::string cosine_matrix_svg(const std::vector<double>& cos, int64_t T, const std::string& title);

}  // namespace viz
