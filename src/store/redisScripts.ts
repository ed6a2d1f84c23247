/** The Lua scripts behind the Redis store's multi-step operations, each run atomically by EVAL. */

/** Store.setIfAbsentWith: the companion is written only when the key was. */
export const SET_IF_ABSENT_WITH = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])
  return 1
end
return 0`;

/** Store.attempt: refused at the limit; a failed attempt is counted (INCR, TTL on creation), in one step. */
export const ATTEMPT = `local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[2]) then return {0, count} end
if ARGV[1] == '1' then
  count = redis.call('INCR', KEYS[1])
  if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
end
return {1, count}`;

/** SADD that extends the set's TTL to at least ARGV[2] seconds, in one step. */
export const SADD_WITH_TTL = `redis.call('SADD', KEYS[1], ARGV[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/** Store.schedule: ZADD that extends the key's TTL to at least ARGV[3] seconds, in one step. */
export const SCHEDULE = `redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < tonumber(ARGV[3]) then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return 1`;

// compare and set of a record without TTL (key rotation): SET without EX keeps it permanent
export const REPLACE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

/** Store.claimDue: the due members, each moved to now + lease, in one step. */
export const CLAIM_DUE = `local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member) end
return due`;

/**
 * Writes a marker next to a record, once, for as long as the record lives: SET NX with the record's
 * remaining lifetime, only while the record exists. 1 when this call wrote it. The record itself is
 * left as it was written.
 */
export const MARK_ONCE = `local ttl = redis.call('PTTL', KEYS[2])
if ttl <= 0 then return 0 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) then return 1 end
return 0`;
