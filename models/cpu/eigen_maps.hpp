#pragma once
// Eigen views of raw buffers: row-major [rows, cols] matrices and vectors.
#include <Eigen/Core>
#include <vector>

namespace lenlab::cpu {

// Storage for everything Eigen reduces over (parameters, gradients, activations). Why aligned:
// Eigen's vectorised reductions (sums, means, norms) peel the first elements up to the first
// 64-byte boundary, so on a plain heap block the summation order, and so the float result,
// would depend on where malloc put the buffer; a 64-byte-aligned base makes every run with the
// same seed bit-identical, whatever ran before it in the process.
template <class T>
using Buffer = std::vector<T, Eigen::aligned_allocator<T>>;

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;
template <class T>
using RowVectorMap = Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>;
template <class T>
using ConstRowVectorMap = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;

}  // namespace lenlab::cpu
