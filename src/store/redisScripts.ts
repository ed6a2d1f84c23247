import type { Redis, Cluster } from 'ioredis';

/** The Lua scripts behind the Redis store's multi-step operations, each run atomically by EVAL. */

/*
 * Receipts. A script that changes something only once (a claim, a take, a count) is sent with a receipt
 * key of its own call (src/store/redisCalls.ts: the same hash slot as its first key) and writes, in the
 * same atomic step, what it did there. A second try of the same call (its answer was lost or late) finds
 * the receipt and answers what the first try did, without doing it again. An undo (UNDO_WRITE,
 * UNDO_CONSUME) takes it back and leaves `!` in the receipt, so that a try that reaches Redis after its
 * undo does nothing. ARGV's last element is the receipt's TTL in seconds.
 */

/** Store.setIfAbsent (and setPermanentIfAbsent when ARGV[2] is '0'): 1 when this call wrote the key. */
export const SET_IF_ABSENT = `local seen = redis.call('GET', KEYS[2])
if seen then return seen == 'w' and 1 or 0 end
local ok
if ARGV[2] == '0' then ok = redis.call('SET', KEYS[1], ARGV[1], 'NX')
else ok = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) end
if not ok then return 0 end
redis.call('SET', KEYS[2], 'w', 'EX', ARGV[3])
return 1`;

/** Store.setIfAbsentWith: the companion is written only when the key was. */
export const SET_IF_ABSENT_WITH = `local seen = redis.call('GET', KEYS[3])
if seen then return seen == 'w' and 1 or 0 end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 0 end
redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])
redis.call('SET', KEYS[3], 'w', 'EX', ARGV[5])
return 1`;

/**
 * Store.consume: GETDEL, the value and the key's expiry (PEXPIRETIME, ms) kept in the receipt as
 * \`<expiry>|<value>\`, for a second try of the call to answer and for UNDO_CONSUME to put back.
 */
export const CONSUME = `local seen = redis.call('GET', KEYS[2])
if seen then
  local cut = string.find(seen, '|', 1, true)
  if cut then return string.sub(seen, cut + 1) end
  return false
end
local value = redis.call('GET', KEYS[1])
if not value then return false end
local at = redis.call('PEXPIRETIME', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], at .. '|' .. value, 'EX', ARGV[1])
return value`;

/** Store.attempt: refused at the limit; a failed attempt is counted (INCR, TTL on creation), in one step. */
export const ATTEMPT = `local seen = redis.call('GET', KEYS[2])
if seen then
  local cut = string.find(seen, ' ', 1, true)
  if cut then return {tonumber(string.sub(seen, 1, cut - 1)), tonumber(string.sub(seen, cut + 1))} end
  return {0, 0}
end
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[2]) then return {0, count} end
if ARGV[1] == '1' then
  count = redis.call('INCR', KEYS[1])
  if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
  redis.call('SET', KEYS[2], '1 ' .. count, 'EX', ARGV[4])
end
return {1, count}`;

/** What a call with a receipt did, taken back: the keys it wrote deleted (a write receipt only), `!` left. */
export const UNDO_WRITE = `if redis.call('GET', KEYS[1]) == 'w' then redis.call('DEL', KEYS[2], KEYS[3]) end
redis.call('SET', KEYS[1], '!', 'EX', ARGV[1])
return 1`;

/** A consume taken back: the value put back with its expiry (unless the key was written since), \`!\` left. */
export const UNDO_CONSUME = `local seen = redis.call('GET', KEYS[1])
local cut = seen and string.find(seen, '|', 1, true)
if cut then
  local at = tonumber(string.sub(seen, 1, cut - 1))
  local value = string.sub(seen, cut + 1)
  local now = redis.call('TIME')
  if at < 0 then redis.call('SET', KEYS[2], value, 'NX')
  elseif at > tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) then
    redis.call('SET', KEYS[2], value, 'NX', 'PXAT', at)
  end
end
redis.call('SET', KEYS[1], '!', 'EX', ARGV[1])
return 1`;

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

// compare and set of a record without TTL (key rotation): SET without EX keeps it permanent; a record that
// already holds the new value (a second try of this call: new key sets are random) answers 1 again
export const REPLACE = `local current = redis.call('GET', KEYS[1])
if current == ARGV[2] then return 1 end
if current ~= ARGV[1] then return 0 end
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
export const MARK_ONCE = `local seen = redis.call('GET', KEYS[3])
if seen then return seen == 'w' and 1 or 0 end
local ttl = redis.call('PTTL', KEYS[2])
if ttl <= 0 then return 0 end
local cap = tonumber(ARGV[2])
local shorter = cap > 0 and cap < ttl
if shorter then ttl = cap end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) then return 0 end
if shorter and ARGV[3] == '1' then redis.call('PEXPIRE', KEYS[2], ttl) end
redis.call('SET', KEYS[3], 'w', 'EX', ARGV[4])
return 1`;

/**
 * Store.takeFree: KEYS[1] the counter, KEYS[2] the set kept alive, KEYS[3..n-1] the candidates, KEYS[n] the
 * receipt; ARGV: limit, value, TTL, slack, the receipt's TTL. -2 when the counter reached the limit, -1 when
 * every candidate exists, else the (0-based) position of the candidate written (-3: the call was undone).
 * Counted with INCR (a table found full stays full).
 */
export const TAKE_FREE = `local receipt = KEYS[#KEYS]
local seen = redis.call('GET', receipt)
if seen then return tonumber(seen) or -3 end
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
local taken = -1
if count > tonumber(ARGV[1]) then taken = -2 else
  for i = 3, #KEYS - 1 do
    if redis.call('SET', KEYS[i], ARGV[2], 'NX', 'EX', ARGV[3]) then
      if redis.call('TTL', KEYS[2]) < tonumber(ARGV[3]) then
        redis.call('SADD', KEYS[2], '1')
        redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[4]))
      end
      taken = i - 3
      break
    end
  end
end
redis.call('SET', receipt, taken, 'EX', ARGV[5])
return taken`;

/** Each script as a command of the client (`vcAttempt`, ...), sent by its SHA once Redis has it. */
export function defineScripts(client: Redis | Cluster): void {
  client.defineCommand('vcSetIfAbsent', { numberOfKeys: 2, lua: SET_IF_ABSENT });
  client.defineCommand('vcConsume', { numberOfKeys: 2, lua: CONSUME });
  client.defineCommand('vcAttempt', { numberOfKeys: 2, lua: ATTEMPT });
  client.defineCommand('vcSetIfAbsentWith', { numberOfKeys: 3, lua: SET_IF_ABSENT_WITH });
  client.defineCommand('vcUndoWrite', { numberOfKeys: 3, lua: UNDO_WRITE });
  client.defineCommand('vcUndoConsume', { numberOfKeys: 2, lua: UNDO_CONSUME });
  client.defineCommand('vcSaddWithTtl', { numberOfKeys: 1, lua: SADD_WITH_TTL });
  client.defineCommand('vcMarkOnce', { numberOfKeys: 3, lua: MARK_ONCE });
  client.defineCommand('vcSchedule', { numberOfKeys: 1, lua: SCHEDULE });
  client.defineCommand('vcClaimDue', { numberOfKeys: 1, lua: CLAIM_DUE });
  client.defineCommand('vcReplace', { numberOfKeys: 1, lua: REPLACE });
  client.defineCommand('vcTakeFree', { lua: TAKE_FREE });
  client.defineCommand('vcAppendWithTtl', { numberOfKeys: 1, lua: APPEND_WITH_TTL });
}
