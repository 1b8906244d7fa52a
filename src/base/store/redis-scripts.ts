/**
 * The Lua scripts of the Redis store. Each runs atomically on the server and, on Redis Cluster, touches
 * the keys of one slot only: those of one scope, which share its hash tag, or one index key. A scope's
 * keys are passed in the order of `SCOPE_KEYS`.
 */

/**
 * The keys of a scope, in the order the scripts take them: snapshot, log, ids, alerts, the old state, and
 * the ids of the previous generation (see APPEND).
 */
export const SCOPE_KEYS = ["snap", "log", "ids", "alerts", "state", "ids0"] as const;

/** How many values an APPEND header holds per scope. */
export const HEADER_VALUES = 11;

/**
 * A scope's version, as every script reads it: the records trimmed from the head of its log (the
 * snapshot hash's `base`) and those still in it. The log's length alone once it can shrink would let a
 * writer that read the scope before a trim write over records it never saw.
 */
const VERSION = `
local function baseOf(k) return tonumber(redis.call('HGET', KEYS[k + 1], 'base') or '0') end
local function versionOf(k) return baseOf(k) + redis.call('LLEN', KEYS[k + 2]) end
`;

/**
 * A pool's fence for one session on Redis Cluster (see DROP): the highest session version, in either
 * generation of the pool's ids (KEYS[ids], KEYS[ids0]), after which a charge of that session was
 * confirmed and its field dropped, counted only when it was written in the session's lifetime `born`
 * (a session that expired and began again starts at version 0). -1 when none.
 */
const FENCE = `
local function fenceOf(ids, ids0, field, born)
  local best = -1
  for _, key in ipairs({ids, ids0}) do
    local f = redis.call('HGET', key, field)
    if f then
      local b, v = string.match(f, '^(.*)\\n(%d+)$')
      if b == born and tonumber(v) > best then best = tonumber(v) end
    end
  end
  return best
end
`;

/**
 * Appends the records of one or more scopes, all or nothing. KEYS: the SCOPE_KEYS of each scope, then the
 * scopes index when ARGV[2] is "1" (a single server only: on Cluster the index is in another slot).
 * ARGV[1] is the TTL, ARGV[3] the writer's clock (epoch ms) and ARGV[4] how long, ms, an event id is kept
 * at least (0: for ever); then, per scope, a header of HEADER_VALUES values (the version the writer
 * expects, -1 for a scope it believes absent; the scope; its lastAt; how many records, id pairs and alert
 * pairs follow; 1 when a snapshot follows; the seq before which records are trimmed, -1 for none; and,
 * for a pool charged on Cluster, the fence field of the session charging it, the session's lifetime
 * (`born`, "" for no fence check) and the session version its charges were decided on) and that data:
 * the records, the id → seq pairs, the alert id → JSON pairs, then the snapshot's state, seq, policy id
 * and policy JSON ("" keeps the stored one).
 * Checks every scope before writing any: another version, an id already applied (in either generation),
 * or a pool whose fence for the session is past the version its charges were decided on (the session
 * was written, and a charge confirmed, since: see DROP) answers {0, scope index, "version" | "seen" |
 * "fenced"} and writes nothing. Otherwise writes
 * everything, refreshes the TTLs of every key of every scope written, and answers {1}. Writing a snapshot
 * drops the old layout's whole-state key; a scope believed absent has its leftovers (a log whose snapshot
 * expired) cleared. Ids come in generations: once the current one (`ids`, begun at the snapshot hash's
 * `idsAt`) is ARGV[4] old, it becomes the previous one (`ids0`, the one before is dropped), so an id is
 * kept between one and two windows. Trimming removes the records before the given seq (never past the
 * snapshot written with them) and moves `base` up. A scope with a snapshot gets its lifetime, `born` (the
 * writer's clock), on the first write that finds none.
 */
export const APPEND = `${VERSION}${FENCE}
local ttl = ARGV[1]
local withIndex = ARGV[2] == '1'
local now, window = tonumber(ARGV[3]), tonumber(ARGV[4])
local per = ${SCOPE_KEYS.length}
local scopes = (#KEYS - (withIndex and 1 or 0)) / per
local function many(command, key, first, last)
  for i = first, last, 1000 do
    redis.call(command, key, unpack(ARGV, i, math.min(i + 999, last)))
  end
end
local starts = {}
local a = 5
for s = 0, scopes - 1 do
  local k = s * per
  local expected = tonumber(ARGV[a])
  local records, ids, alerts = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
  local exists = redis.call('EXISTS', KEYS[k + 1], KEYS[k + 5]) > 0
  if expected < 0 then
    if exists then return {0, s, 'version'} end
  else
    if not exists or versionOf(k) ~= expected then return {0, s, 'version'} end
    local first = a + ${HEADER_VALUES} + records
    for i = first, first + 2 * ids - 1, 2 do
      if redis.call('HEXISTS', KEYS[k + 3], ARGV[i]) == 1 or redis.call('HEXISTS', KEYS[k + 6], ARGV[i]) == 1 then
        return {0, s, 'seen'}
      end
    end
    local born = ARGV[a + 9]
    if born ~= '' and fenceOf(KEYS[k + 3], KEYS[k + 6], ARGV[a + 8], born) > tonumber(ARGV[a + 10]) then
      return {0, s, 'fenced'}
    end
  end
  starts[s + 1] = a
  a = a + ${HEADER_VALUES} + records + 2 * ids + 2 * alerts + (ARGV[a + 6] == '1' and 4 or 0)
end
for s = 0, scopes - 1 do
  local k = s * per
  a = starts[s + 1]
  local records, ids, alerts = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
  if tonumber(ARGV[a]) < 0 then redis.call('DEL', KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 6]) end
  if window > 0 then
    local since = tonumber(redis.call('HGET', KEYS[k + 1], 'idsAt') or '-1')
    if since < 0 then
      redis.call('HSET', KEYS[k + 1], 'idsAt', now)
    elseif now - since >= window then
      if redis.call('EXISTS', KEYS[k + 3]) == 1 then redis.call('RENAME', KEYS[k + 3], KEYS[k + 6])
      else redis.call('DEL', KEYS[k + 6]) end
      redis.call('HSET', KEYS[k + 1], 'idsAt', now)
    end
  end
  local i = a + ${HEADER_VALUES}
  if records > 0 then many('RPUSH', KEYS[k + 2], i, i + records - 1) end
  i = i + records
  if ids > 0 then many('HSET', KEYS[k + 3], i, i + 2 * ids - 1) end
  i = i + 2 * ids
  if alerts > 0 then many('HSET', KEYS[k + 4], i, i + 2 * alerts - 1) end
  i = i + 2 * alerts
  if ARGV[a + 6] == '1' then
    redis.call('HSET', KEYS[k + 1], 'state', ARGV[i], 'seq', ARGV[i + 1], 'pid', ARGV[i + 2])
    if ARGV[i + 3] ~= '' then redis.call('HSET', KEYS[k + 1], 'policy', ARGV[i + 3]) end
    redis.call('DEL', KEYS[k + 5])
  end
  if redis.call('HEXISTS', KEYS[k + 1], 'seq') == 1 then redis.call('HSETNX', KEYS[k + 1], 'born', ARGV[3]) end
  local trimTo = math.min(tonumber(ARGV[a + 7]), tonumber(redis.call('HGET', KEYS[k + 1], 'seq') or '0'))
  local base = baseOf(k)
  if trimTo > base then
    redis.call('LTRIM', KEYS[k + 2], trimTo - base, -1)
    redis.call('HSET', KEYS[k + 1], 'base', trimTo)
  end
  for j = 1, per do if j ~= 5 then redis.call('EXPIRE', KEYS[k + j], ttl) end end
  if withIndex then redis.call('ZADD', KEYS[#KEYS], ARGV[a + 2], ARGV[a + 1]) end
end
if withIndex then redis.call('EXPIRE', KEYS[#KEYS], ttl) end
return {1}
`;

/**
 * Reads one scope at once: {0} when it is absent; else {kind, version, found, ...} where found holds, for
 * each id field in ARGV[3..], the log record it was applied as, "" when it was applied but its record has
 * been trimmed, and false when it was not applied (or is older than both generations of ids). Kind 1: the
 * version is still ARGV[1] (the reader's copy is current). Kind 2: the snapshot's state, seq and policy
 * id, the policy's JSON when the tail is not empty and the id differs from ARGV[2] (false otherwise), and
 * the tail of records after the snapshot. Kind 3: the old layout, the whole state at the log's head.
 * Kind 4: the reader's copy (at version ARGV[1]) can be brought up to date: no snapshot since, and the
 * records after it were decided under the policy ARGV[2]; the snapshot's seq and those records. Every
 * kind ends with the scope's lifetime, `born` ("" when it has none yet).
 */
export const READ = `${VERSION}
local base = baseOf(0)
local len = base + redis.call('LLEN', KEYS[2])
local snapSeq = redis.call('HGET', KEYS[1], 'seq')
if not snapSeq and redis.call('EXISTS', KEYS[5]) == 0 then return {0} end
local found = {}
for i = 3, #ARGV do
  local seq = redis.call('HGET', KEYS[3], ARGV[i]) or redis.call('HGET', KEYS[6], ARGV[i])
  if not seq then found[i - 2] = false
  elseif tonumber(seq) < base then found[i - 2] = ''
  else found[i - 2] = redis.call('LINDEX', KEYS[2], tonumber(seq) - base) or '' end
end
local known = tonumber(ARGV[1])
local born = redis.call('HGET', KEYS[1], 'born') or ''
if known == len then return {1, len, found, born} end
if not snapSeq then return {3, len, found, redis.call('GET', KEYS[5]), born} end
if known >= 0 and known < len and tonumber(snapSeq) <= known and redis.call('HGET', KEYS[1], 'pid') == ARGV[2] then
  return {4, len, found, tonumber(snapSeq), redis.call('LRANGE', KEYS[2], known - base, -1), born}
end
local snap = redis.call('HMGET', KEYS[1], 'state', 'pid')
local tail = redis.call('LRANGE', KEYS[2], tonumber(snapSeq) - base, -1)
local policy = false
if #tail > 0 and snap[2] ~= ARGV[2] then policy = redis.call('HGET', KEYS[1], 'policy') end
return {2, len, found, snap[1], tonumber(snapSeq), snap[2] or '', policy, tail, born}
`;

/**
 * A page of a scope's log (KEYS: its snapshot and log): the records from seq ARGV[1] on (from the first
 * one kept, when that is later), at most ARGV[2] of them (-1: all). Reads `base` and the list together,
 * so a trim between the two cannot shift the page.
 */
export const RANGE = `${VERSION}
local base = baseOf(0)
local from = math.max(tonumber(ARGV[1]) - base, 0)
local limit = tonumber(ARGV[2])
return redis.call('LRANGE', KEYS[2], from, limit < 0 and -1 or from + limit - 1)
`;

/**
 * Rewrites an alert (KEYS[4], field ARGV[2]) as ARGV[4] if it still reads ARGV[3], refreshing the TTLs of
 * the scope's keys (KEYS, in SCOPE_KEYS order) to ARGV[1]. Answers 1 when written, 0 when it changed.
 */
export const ACKNOWLEDGE = `
if redis.call('HGET', KEYS[4], ARGV[2]) ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[4], ARGV[2], ARGV[4])
for j = 1, #KEYS do if j ~= 5 then redis.call('EXPIRE', KEYS[j], ARGV[1]) end end
return 1
`;

/**
 * Removes index entries (KEYS[1], ARGV member/score pairs) found expired, unless the entry's score moved
 * meanwhile (written again since). Touches only the index key, so it runs on Cluster too.
 */
export const PRUNE = `
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) == ARGV[i + 1] then redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return 0
`;

/**
 * On Redis Cluster, once a session's step has written events a pool was charged with: drops the pool's
 * fields of those charges (KEYS: the pool's snapshot, ids and ids0; ARGV[5..]: the fields) and, in the
 * same step, moves the pool's fence for the session (field ARGV[2], `<born>\n<version>`) up to the
 * session's version after that step (ARGV[4]) in its lifetime ARGV[3]. From then on a charge of the
 * session decided on an older version (one that may not have seen those events) is refused by APPEND
 * ("fenced"), so the field is no longer needed to refuse it. A pool that expired is left alone.
 */
export const DROP = `${FENCE}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 5, #ARGV do
  redis.call('HDEL', KEYS[2], ARGV[i])
  redis.call('HDEL', KEYS[3], ARGV[i])
end
local best = math.max(tonumber(ARGV[4]), fenceOf(KEYS[2], KEYS[3], ARGV[2], ARGV[3]))
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3] .. '\\n' .. best)
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
`;
