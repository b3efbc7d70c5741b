-- Read the semaphore after returning expired permits to the pool.
-- Reply: {available, held}.
sem_prune()
return {sem_avail(), redis.call('ZCARD', KEYS[2])}
