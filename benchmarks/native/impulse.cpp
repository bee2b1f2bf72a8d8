// Native Pinocchio baseline for benchmarks/impulsive.py: the sticking impact of the crutch walker's tip
// (seed 000 eq. 10) by pinocchio::impulseDynamics, in a compiled loop on one thread, the same two calls per
// state as the benchmark's Python loop (computeFrameJacobian in LOCAL_WORLD_ALIGNED, then impulseDynamics
// with the rows [z, x] of the tip's linear Jacobian, restitution 0, no damping).
//
//   impulse MODEL FRAME STATES OUT REPEATS
//
// MODEL   the pinocchio::Model saved by pinocchio.Model.saveToBinary (built from difimpact.to_urdf)
// FRAME   the name of the contact point's frame
// STATES  raw float64: n (as one double), then q (n x nq) and qdot (n x nv), row-major
// OUT     raw float64: qdot_plus (n x nv), row-major
// Prints one JSON line: n, repeats, the median wall and process-CPU seconds of one loop over the n states.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pinocchio/algorithm/contact-dynamics.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/multibody.hpp"
#include "pinocchio/serialization.hpp"

namespace {

std::vector<double> read_doubles(const std::string & path)
{
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f)
    throw std::runtime_error("cannot open " + path);
  const std::streamsize size = f.tellg();
  std::vector<double> out(static_cast<size_t>(size) / sizeof(double));
  f.seekg(0);
  f.read(reinterpret_cast<char *>(out.data()), size);
  return out;
}

double cpu_seconds()
{
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

double median(std::vector<double> x)
{
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

} // namespace

int main(int argc, char ** argv)
{
  if (argc != 6)
  {
    std::fprintf(stderr, "usage: %s MODEL FRAME STATES OUT REPEATS\n", argv[0]);
    return 2;
  }
  pinocchio::Model model;
  model.loadFromBinary(argv[1]);
  pinocchio::Data data(model);
  const pinocchio::FrameIndex tip = model.getFrameId(argv[2]);
  if (tip >= static_cast<pinocchio::FrameIndex>(model.nframes))
    throw std::runtime_error(std::string("the model has no frame named ") + argv[2]);

  const std::vector<double> states = read_doubles(argv[3]);
  const long n = static_cast<long>(states.at(0));
  const long nq = model.nq, nv = model.nv;
  if (static_cast<long>(states.size()) != 1 + n * (nq + nv))
    throw std::runtime_error("STATES holds " + std::to_string(states.size()) + " doubles, expected "
                             + std::to_string(1 + n * (nq + nv)));
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const RowMajor> q(states.data() + 1, n, nq);
  const Eigen::Map<const RowMajor> qdot(states.data() + 1 + n * nq, n, nv);
  RowMajor qdot_plus(n, nv);

  pinocchio::Data::Matrix6x J = pinocchio::Data::Matrix6x::Zero(6, nv);
  Eigen::MatrixXd A(2, nv);
  Eigen::VectorXd qk(nq), vk(nv);
  auto loop = [&]() {
    for (long k = 0; k < n; ++k)
    {
      qk = q.row(k).transpose();
      vk = qdot.row(k).transpose();
      pinocchio::computeFrameJacobian(model, data, qk, tip, pinocchio::LOCAL_WORLD_ALIGNED, J);
      A.row(0) = J.row(2); // normal: world z
      A.row(1) = J.row(0); // tangent: world x
      qdot_plus.row(k) = pinocchio::impulseDynamics(model, data, qk, vk, A, 0.0, 0.0).transpose();
    }
  };

  const int repeats = std::max(1, std::atoi(argv[5]));
  loop(); // warm-up
  std::vector<double> walls, cpus;
  for (int r = 0; r < repeats; ++r)
  {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    loop();
    cpus.push_back(cpu_seconds() - c0);
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
  }

  std::ofstream out(argv[4], std::ios::binary);
  out.write(reinterpret_cast<const char *>(qdot_plus.data()), sizeof(double) * n * nv);
  std::printf("{\"n\": %ld, \"repeats\": %d, \"wall_s\": %.9g, \"cpu_s\": %.9g}\n", n, repeats, median(walls),
              median(cpus));
  return 0;
}
