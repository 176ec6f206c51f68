"""The algorithms, as generators of effects: one module per shell class (`lock` for
`redisson_py.asyncio.lock`, `semaphore` for `redisson_py.asyncio.semaphore`, `watchdog`
for `redisson_py.asyncio.watchdog`...), and what they share: the call helpers (`calls`),
the lock kinds and their reply protocol (`lock_kinds`), waiting (`waiting`, `grants`),
quorum arithmetic (`quorum`), back-off (`backoff`) and the semaphores' and latch's ref
(`synchronizers`)."""
