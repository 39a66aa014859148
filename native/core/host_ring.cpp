// host_ring.cpp: the implementation of core/host_ring.h (see the header for the contract).
#include "core/host_ring.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace s3 {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kHelloMagic = 0x53335247;  // "S3RG"

struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t ranks;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return int(std::max<int64_t>(0, std::min<int64_t>(left, 1 << 30)));
}

}  // namespace

HostRing::HostRing(int rank, int ranks, std::chrono::milliseconds timeout, const std::string& bind_host, int port)
    : rank_(rank), ranks_(ranks), timeout_(timeout) {
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    throw CollectiveError("host ring: rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                          " (want 0 ≤ rank < ranks, ranks ≥ 1)");
  }
  if (timeout.count() <= 0) throw CollectiveError("host ring: the timeout must be positive");
  if (ranks == 1) {
    connected_ = true;
    return;
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) throw CollectiveError(std::string("host ring: socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  if (::inet_pton(AF_INET, bind_host.c_str(), &address.sin_addr) != 1) {
    close_fd(listen_fd_);
    throw CollectiveError("host ring: cannot listen on " + bind_host + " (want an IPv4 address such as 0.0.0.0)");
  }
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || ::listen(listen_fd_, 4) != 0) {
    const std::string reason = std::strerror(errno);
    close_fd(listen_fd_);
    throw CollectiveError("host ring: cannot listen on " + bind_host + ":" + std::to_string(port) + ": " + reason);
  }
  socklen_t length = sizeof(address);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
}

HostRing::~HostRing() { close(); }

void HostRing::close() {
  close_fd(listen_fd_);
  close_fd(next_fd_);
  close_fd(previous_fd_);
  if (ranks_ > 1) connected_ = false;
}

std::string HostRing::description() const {
  return "host ring, rank " + std::to_string(rank_) + " of " + std::to_string(ranks_);
}

void HostRing::fail(const std::string& message) {
  failed_ = true;
  close();
  throw CollectiveError(description() + ": " + message);
}

void HostRing::require_ready(const char* what) const {
  if (failed_) throw CollectiveError(description() + ": " + what + ": the ring failed earlier and cannot be used again");
  if (!connected_) throw CollectiveError(description() + ": " + what + ": not connected (call connect first)");
}

void HostRing::connect(const std::string& next_host, int next_port) {
  if (ranks_ == 1) return;
  if (connected_ || failed_) throw CollectiveError(description() + ": connect: called twice");
  const Clock::time_point deadline = Clock::now() + timeout_;
  const std::string target = next_host + ":" + std::to_string(next_port);
  // The next rank: retried until the deadline, since it may not be listening yet.
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(next_host.c_str(), std::to_string(next_port).c_str(), &hints, &found) != 0 || found == nullptr) {
    fail("connect: cannot resolve rank " + std::to_string(next_rank()) + "'s address " + target);
  }
  sockaddr_in next_address{};
  std::memcpy(&next_address, found->ai_addr, sizeof(next_address));
  ::freeaddrinfo(found);
  std::string last_error;
  while (next_fd_ < 0) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&next_address), sizeof(next_address)) == 0) {
      next_fd_ = fd;
      break;
    }
    last_error = std::strerror(errno);
    ::close(fd);
    if (Clock::now() >= deadline) {
      fail("connect: rank " + std::to_string(next_rank()) + " at " + target + " did not answer within " +
           std::to_string(timeout_.count()) + " ms (" + last_error + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  set_nodelay(next_fd_);
  set_nonblocking(next_fd_);
  const Hello mine{kHelloMagic, rank_, ranks_};
  exchange(&mine, sizeof(mine), nullptr, 0, "connect (greeting the next rank)");
  // The previous rank.
  while (previous_fd_ < 0) {
    pollfd p{listen_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready <= 0) {
      fail("connect: rank " + std::to_string(previous_rank()) + " did not connect within " + std::to_string(timeout_.count()) +
           " ms");
    }
    previous_fd_ = ::accept(listen_fd_, nullptr, nullptr);
  }
  set_nodelay(previous_fd_);
  set_nonblocking(previous_fd_);
  connected_ = true;  // for exchange; reset by fail() below when the greeting is wrong
  Hello theirs{};
  exchange(nullptr, 0, &theirs, sizeof(theirs), "connect (the previous rank's greeting)");
  if (theirs.magic != kHelloMagic || theirs.rank != previous_rank() || theirs.ranks != ranks_) {
    fail("connect: the peer that connected is not rank " + std::to_string(previous_rank()) + " of " + std::to_string(ranks_) +
         (theirs.magic == kHelloMagic ? " (it says rank " + std::to_string(theirs.rank) + " of " + std::to_string(theirs.ranks) + ")"
                                      : " (not a host ring)"));
  }
  close_fd(listen_fd_);
}

void HostRing::exchange(const void* send, size_t send_bytes, void* receive, size_t receive_bytes, const char* what) {
  const auto* out = static_cast<const uint8_t*>(send);
  auto* in = static_cast<uint8_t*>(receive);
  size_t sent = 0, received = 0;
  Clock::time_point deadline = Clock::now() + timeout_;  // moved on by every byte that moves
  while (sent < send_bytes || received < receive_bytes) {
    pollfd fds[2];
    nfds_t n = 0;
    int send_slot = -1, receive_slot = -1;
    if (sent < send_bytes) {
      send_slot = int(n);
      fds[n++] = {next_fd_, POLLOUT, 0};
    }
    if (received < receive_bytes) {
      receive_slot = int(n);
      fds[n++] = {previous_fd_, POLLIN, 0};
    }
    const int ready = ::poll(fds, n, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      const bool waiting_to_receive = received < receive_bytes;
      fail(std::string(what) + ": " +
           (waiting_to_receive ? "no data from rank " + std::to_string(previous_rank())
                               : "rank " + std::to_string(next_rank()) + " took no data") +
           " for " + std::to_string(timeout_.count()) + " ms");
    }
    if (send_slot >= 0 && (fds[send_slot].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t k = ::send(next_fd_, out + sent, send_bytes - sent, MSG_NOSIGNAL);
      if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        fail(std::string(what) + ": rank " + std::to_string(next_rank()) + " closed its connection (it has stopped: " +
             std::strerror(errno) + ")");
      }
      if (k > 0) {
        sent += size_t(k);
        deadline = Clock::now() + timeout_;
      }
    }
    if (receive_slot >= 0 && (fds[receive_slot].revents & (POLLIN | POLLERR | POLLHUP))) {
      const ssize_t k = ::recv(previous_fd_, in + received, receive_bytes - received, 0);
      if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        fail(std::string(what) + ": rank " + std::to_string(previous_rank()) + " closed its connection (it has stopped)");
      }
      if (k > 0) {
        received += size_t(k);
        deadline = Clock::now() + timeout_;
      }
    }
  }
}

void HostRing::all_reduce_piece(float* data, size_t count) {
  const size_t R = size_t(ranks_);
  auto begin = [&](size_t chunk) { return chunk * count / R; };
  auto size = [&](size_t chunk) { return begin(chunk + 1) - begin(chunk); };
  const size_t r = size_t(rank_);
  // Reduce-scatter: after step s, this rank holds the sum of s + 2 ranks' values of chunk r − s − 1;
  // after R − 1 steps, the whole sum of chunk r + 1.
  for (size_t s = 0; s + 1 < R; s++) {
    const size_t send_chunk = (r + R - s) % R, receive_chunk = (r + 2 * R - s - 1) % R;
    exchange(data + begin(send_chunk), size(send_chunk) * sizeof(float), scratch_.data(), size(receive_chunk) * sizeof(float),
             "all_reduce_sum");
    float* target = data + begin(receive_chunk);
    for (size_t i = 0, n = size(receive_chunk); i < n; i++) target[i] += scratch_[i];
  }
  // All-gather: the whole sums go round, copied as they are.
  for (size_t s = 0; s + 1 < R; s++) {
    const size_t send_chunk = (r + 1 + R - s) % R, receive_chunk = (r + R - s) % R;
    exchange(data + begin(send_chunk), size(send_chunk) * sizeof(float), data + begin(receive_chunk),
             size(receive_chunk) * sizeof(float), "all_reduce_sum");
  }
}

void HostRing::all_reduce_sum(float* data, size_t count) {
  require_ready("all_reduce_sum");
  if (ranks_ == 1 || count == 0) return;
  const size_t segment = kPieceFloats * size_t(ranks_);
  scratch_.resize(std::min(kPieceFloats, count / size_t(ranks_) + 1));
  for (size_t at = 0; at < count; at += segment) all_reduce_piece(data + at, std::min(segment, count - at));
}

void HostRing::broadcast(void* data, size_t bytes, int root) {
  require_ready("broadcast");
  if (root < 0 || root >= ranks_) throw CollectiveError(description() + ": broadcast from rank " + std::to_string(root) + " (no such rank)");
  if (ranks_ == 1) return;
  auto* p = static_cast<uint8_t*>(data);
  const size_t piece = kPieceFloats * sizeof(float);
  const bool forward = next_rank() != root;
  for (size_t at = 0; at < bytes; at += piece) {
    const size_t n = std::min(piece, bytes - at);
    if (rank_ != root) exchange(nullptr, 0, p + at, n, "broadcast");
    if (rank_ == root || forward) exchange(p + at, n, nullptr, 0, "broadcast");
  }
}

}  // namespace s3
