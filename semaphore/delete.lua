-- Delete the semaphore: its permits, held permits, waiters' needs and
-- finished acquisitions (its waiters keep waiting, registered until their
-- window ends). Another kind is refused before anything is deleted.
-- Reply: how many of those keys existed.
sem_kind()
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[4], KEYS[5])
