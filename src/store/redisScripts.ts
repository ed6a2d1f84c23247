import type { Redis, Cluster } from 'ioredis';

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

/** SADD that makes the set live at least ARGV[2] seconds, in one step: a new set gets its TTL, an older one is extended. */
export const SADD_WITH_TTL = `redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('EXPIRE', KEYS[1], ARGV[2], 'NX') == 0 then redis.call('EXPIRE', KEYS[1], ARGV[2], 'GT') end
return 1`;

/** Store.addToList: the first member creates the text with its TTL; later ones are appended, the TTL extended. */
export const APPEND_WITH_TTL = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 1 end
redis.call('APPEND', KEYS[1], ' ' .. ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2], 'GT')
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
 * Writes a marker next to a record, once, for as long as the record lives (at most ARGV[2] ms when that is
 * above 0): SET NX, only while the record exists. 1 when this call wrote it. The record is left as it was
 * written, or (ARGV[3] = '1') made to expire with the marker.
 */
export const MARK_ONCE = `local ttl = redis.call('PTTL', KEYS[2])
if ttl <= 0 then return 0 end
local cap = tonumber(ARGV[2])
local shorter = cap > 0 and cap < ttl
if shorter then ttl = cap end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) then return 0 end
if shorter and ARGV[3] == '1' then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1`;

/**
 * Store.takeFree: KEYS[1] the counter, KEYS[2] the set kept alive, KEYS[3..] the candidates; ARGV: limit,
 * value, TTL, slack. -2 when the counter reached the limit, -1 when every candidate exists, else the
 * (0-based) position of the candidate written. Counted with INCR (a table found full stays full).
 */
export const TAKE_FREE = `local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
if count > tonumber(ARGV[1]) then return -2 end
for i = 3, #KEYS do
  if redis.call('SET', KEYS[i], ARGV[2], 'NX', 'EX', ARGV[3]) then
    if redis.call('TTL', KEYS[2]) < tonumber(ARGV[3]) then
      redis.call('SADD', KEYS[2], '1')
      redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[4]))
    end
    return i - 3
  end
end
return -1`;

/** Each script as a command of the client (`vcAttempt`, ...), sent by its SHA once Redis has it. */
export function defineScripts(client: Redis | Cluster): void {
  client.defineCommand('vcAttempt', { numberOfKeys: 1, lua: ATTEMPT });
  client.defineCommand('vcSetIfAbsentWith', { numberOfKeys: 2, lua: SET_IF_ABSENT_WITH });
  client.defineCommand('vcSaddWithTtl', { numberOfKeys: 1, lua: SADD_WITH_TTL });
  client.defineCommand('vcMarkOnce', { numberOfKeys: 2, lua: MARK_ONCE });
  client.defineCommand('vcSchedule', { numberOfKeys: 1, lua: SCHEDULE });
  client.defineCommand('vcClaimDue', { numberOfKeys: 1, lua: CLAIM_DUE });
  client.defineCommand('vcReplace', { numberOfKeys: 1, lua: REPLACE });
  client.defineCommand('vcTakeFree', { lua: TAKE_FREE });
  client.defineCommand('vcAppendWithTtl', { numberOfKeys: 1, lua: APPEND_WITH_TTL });
}
