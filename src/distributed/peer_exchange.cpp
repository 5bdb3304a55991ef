/*
 * peer_exchange.cpp — the shard-to-shard exchange over Gloo's TCP transport (peer_exchange.h).
 *
 * A group is one rank's transport context of Gloo (gloo::transport::Context) on a TCP device
 * bound to the address the coordinator reached this server at, with a pair for every other rank.
 * An exchange posts one send and one receive per peer that has bytes for it (UnboundBuffer over
 * the caller's contiguous buffers, one segment per peer, a tag per exchange that every rank counts
 * alike) and waits for all of them.  Gloo's waits cannot time out without closing every pair, so
 * the caller's interrupt flag is watched by a thread that aborts the waits (abortWaitRecv,
 * abortWaitSend) when it is set; Gloo's own timeout is the last resort.  Every exception stays in
 * here: the caller gets a status and a message.  Threads started here (the device's loop, the
 * watcher) block every signal: the backend's signal handlers run on its own thread.
 */
#include "peer_exchange.h"

#include <signal.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gloo/transport/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

struct PeerGroup
{
	int			rank;
	int			size;
	std::shared_ptr<gloo::transport::Device> device;
	std::shared_ptr<gloo::transport::Context> context;
	std::vector<std::vector<char>> addresses;	/* [size] this rank's pair for each peer */
	uint64_t	next_tag;
};

namespace
{

/* Writes message into error (cut to its size). */
void
set_error(char *error, size_t error_size, const std::string &message)
{
	if (error_size == 0)
		return;
	strncpy(error, message.c_str(), error_size - 1);
	error[error_size - 1] = '\0';
}

/*
 * Runs f (which returns a status) and turns an exception into PEER_FAILED, its message after
 * prefix written into error: no exception leaves this file.
 */
template<typename F>
PeerStatus
guarded(char *error, size_t error_size, const std::string &prefix, F f)
{
	try
	{
		return f();
	}
	catch (const std::exception &e)
	{
		set_error(error, error_size, prefix + e.what());
	}
	catch (...)
	{
		set_error(error, error_size, prefix + "unknown exception");
	}
	return PEER_FAILED;
}

/* Runs f with every signal blocked, so that the threads it starts inherit the mask. */
template<typename F>
void
with_signals_blocked(F f)
{
	sigset_t	all;
	sigset_t	old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	try
	{
		f();
	}
	catch (...)
	{
		pthread_sigmask(SIG_SETMASK, &old, nullptr);
		throw;
	}
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

/*
 * Watches the caller's interrupt flag while an exchange waits: when it is set, aborts the waits of
 * both buffers (each abort ends one wait, which then returns false).
 */
class InterruptWatcher
{
  public:
	InterruptWatcher(PeerInterruptCheck interrupted, gloo::transport::UnboundBuffer *send,
					 gloo::transport::UnboundBuffer *recv)
		: interrupted_(interrupted), send_(send), recv_(recv)
	{
		with_signals_blocked([this] { thread_ = std::thread([this] { watch(); }); });
	}

	~InterruptWatcher()
	{
		{
			std::lock_guard<std::mutex> lock(mutex_);
			done_ = true;
		}
		wake_.notify_one();
		thread_.join();
	}

	bool fired() const
	{
		return fired_.load();
	}

  private:
	void watch()
	{
		std::unique_lock<std::mutex> lock(mutex_);

		while (!done_)
		{
			if (interrupted_ != nullptr && interrupted_())
			{
				fired_.store(true);
				if (send_ != nullptr)
					send_->abortWaitSend();
				if (recv_ != nullptr)
					recv_->abortWaitRecv();
				return;
			}
			wake_.wait_for(lock, std::chrono::milliseconds(PEER_POLL_MS));
		}
	}

	PeerInterruptCheck interrupted_;
	gloo::transport::UnboundBuffer *send_;
	gloo::transport::UnboundBuffer *recv_;
	std::thread thread_;
	std::mutex	mutex_;
	std::condition_variable wake_;
	bool		done_ = false;
	std::atomic<bool> fired_{false};
};

}								/* namespace */

/*
 * Makes rank's group of size ranks: a TCP device bound to host (its pairs listen on ports the
 * kernel picks) and a pair for every other rank, whose addresses peer_group_address gives.
 */
PeerStatus
peer_group_open(const char *host, int rank, int size, PeerGroup **group, char *error,
				size_t error_size)
{
	*group = nullptr;
	return guarded(error, error_size, "", [&] {
		std::unique_ptr<PeerGroup> g(new PeerGroup());
		gloo::transport::tcp::attr attr(host);

		g->rank = rank;
		g->size = size;
		g->next_tag = 0;
		with_signals_blocked([&] { g->device = gloo::transport::tcp::CreateDevice(attr); });
		g->context = g->device->createContext(rank, size);
		/* a pair waits five of its timeouts for its peer's connection */
		g->context->setTimeout(std::chrono::milliseconds(PEER_CONNECT_TIMEOUT_MS / 5));
		g->addresses.resize(size);
		for (int peer = 0; peer < size; peer++)
			if (peer != rank)
				g->addresses[peer] = g->context->createPair(peer)->address().bytes();
		*group = g.release();
		return PEER_OK;
	});
}

/* The address of rank's pair for peer (what peer connects to), size bytes; NULL for itself. */
const char *
peer_group_address(const PeerGroup *group, int peer, size_t *size)
{
	*size = group->addresses[peer].size();
	return *size > 0 ? group->addresses[peer].data() : nullptr;
}

/*
 * Connects every pair to its peer: addresses[peer] (sizes[peer] bytes) is the address the peer's
 * open gave for this rank.  Each connect waits for its peer at most PEER_CONNECT_TIMEOUT_MS.
 */
PeerStatus
peer_group_connect(PeerGroup *group, const char *const *addresses, const size_t *sizes,
				   char *error, size_t error_size)
{
	for (int peer = 0; peer < group->size; peer++)
	{
		PeerStatus	status;

		if (peer == group->rank)
			continue;
		status = guarded(error, error_size, "part " + std::to_string(peer) + ": ", [&] {
			group->context->getPair(peer)->connect(
				std::vector<char>(addresses[peer], addresses[peer] + sizes[peer]));
			return PEER_OK;
		});
		if (status != PEER_OK)
			return status;
	}
	group->context->setTimeout(std::chrono::milliseconds(PEER_EXCHANGE_TIMEOUT_MS));
	return PEER_OK;
}

/*
 * Sends every peer its segment of send (send_bytes[peer] bytes each, in rank order) and receives
 * each peer's into its segment of recv (recv_bytes[peer]); a peer with no bytes either way is not
 * written to.  Waits until all are done, interrupted() says stop, or a pair fails.
 */
PeerStatus
peer_group_exchange(PeerGroup *group, const void *send, const size_t *send_bytes, void *recv,
					const size_t *recv_bytes, PeerInterruptCheck interrupted, char *error,
					size_t error_size)
{
	size_t		send_total = 0,
				recv_total = 0;
	uint64_t	tag = group->next_tag++;

	for (int peer = 0; peer < group->size; peer++)
	{
		send_total += send_bytes[peer];
		recv_total += recv_bytes[peer];
	}
	return guarded(error, error_size, "", [&] {
		std::unique_ptr<gloo::transport::UnboundBuffer> send_buffer;
		std::unique_ptr<gloo::transport::UnboundBuffer> recv_buffer;
		int			sends = 0,
					recvs = 0;
		size_t		send_at = 0,
					recv_at = 0;
		const auto	timeout = std::chrono::milliseconds(PEER_EXCHANGE_TIMEOUT_MS);

		if (send_total > 0)
			send_buffer = group->context->createUnboundBuffer(const_cast<void *>(send), send_total);
		if (recv_total > 0)
			recv_buffer = group->context->createUnboundBuffer(recv, recv_total);
		{
			InterruptWatcher watcher(interrupted, send_buffer.get(), recv_buffer.get());

			for (int peer = 0; peer < group->size; peer++)
			{
				if (recv_bytes[peer] > 0)
				{
					recv_buffer->recv(peer, tag, recv_at, recv_bytes[peer]);
					recvs++;
				}
				if (send_bytes[peer] > 0)
				{
					send_buffer->send(peer, tag, send_at, send_bytes[peer]);
					sends++;
				}
				recv_at += recv_bytes[peer];
				send_at += send_bytes[peer];
			}
			for (; recvs > 0; recvs--)
				if (!recv_buffer->waitRecv(nullptr, timeout))
					return PEER_INTERRUPTED;
			for (; sends > 0; sends--)
				if (!send_buffer->waitSend(nullptr, timeout))
					return PEER_INTERRUPTED;
			if (watcher.fired())
				return PEER_INTERRUPTED;
		}
		return PEER_OK;
	});
}

/* Closes the group's pairs and frees it (NULL: nothing). */
void
peer_group_close(PeerGroup *group)
{
	if (group == nullptr)
		return;
	try
	{
		if (group->context != nullptr)
			for (int peer = 0; peer < group->size; peer++)
			{
				std::unique_ptr<gloo::transport::Pair> &pair = group->context->getPair(peer);

				if (peer != group->rank && pair)
					pair->close();
			}
	}
	catch (...)
	{
		/* a pair never made: nothing to close */
	}
	delete group;
}
