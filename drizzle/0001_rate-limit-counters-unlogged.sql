-- Rate-limit counters are rebuilt within a minute if lost: skip the write-ahead log, which makes every request's counter write a disk flush.
ALTER TABLE "rate_limit_counters" SET UNLOGGED;
