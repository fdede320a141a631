;; Recall's words of all-ASCII text (tokenize.ts addAscii, the same words in the same order),
;; in WebAssembly. ascii-words.ts drives it; `npm run build:wasm` compiles this file into
;; ascii-words-wasm.ts, and a test checks that the two agree.
;;
;; A text is read in two passes. The first lowers it in place, 16 bytes at a time (SIMD): a
;; word byte (letter, digit) becomes its lower case, any other byte 0. The second finds the
;; words from masks of 64 bytes (a bit per word byte): a word starts at a set bit whose byte
;; before is clear, and its length is the run of set bits from there. So the loop runs once
;; per word, not once per byte, and mispredicts about once per 64 bytes, where reading byte by
;; byte mispredicted at nearly every word's end: on the ingest bench's 64 KB texts 0.8-0.86 ns
;; per byte with the words looked up, against 1.9-2.0 byte by byte here and 3.5 in JavaScript.
;;
;; The table of distinct words is keyed by the word itself where it fits in 8 bytes (most
;; words): its bytes as an i64, so a word seen before costs a load, a mask, a multiply and a
;; compare, and only a new word is hashed (word-hash.ts: two FNV lanes). A longer word is
;; hashed as it is read and keyed by its lanes with the top bit set, which no short word's key
;; has (its bytes are under 0x80), and its high lane whole beside the key.
;;
;; Memory (64 KiB pages):
;;   [0, 4 MiB)          two table regions of 2 MiB, 131072 slots of 16 bytes each:
;;                       key (i64), number + 1 (0: free), a long word's high lane
;;   [4 MiB, +512 KiB)   the words in first-use order: hi, lo (65536 at most)
;;   [4.5 MiB, +4 KiB)   a short word the caller writes for `short`
;;   [4.5 MiB + 4 KiB, ) the text's bytes, written by ascii-words.ts, then 128 bytes this
;;                       module zeroes (memory grows for more)
(module
  (memory (export "memory") 74)
  (global $table (mut i32) (i32.const 0))
  (global $mask (mut i32) (i32.const 1023))
  ;; 64 - log2(slots): a key's slot is the top bits of key * 2^64/phi (Fibonacci hashing)
  (global $shift (mut i64) (i64.const 54))
  (global $count (export "count") (mut i32) (i32.const 0))

  ;; An empty table of 1024 slots, in region A. A step's text has a few hundred distinct words:
  ;; from 1024 slots the table rarely grows and its probes stay short.
  (func $reset (export "reset")
    (global.set $table (i32.const 0))
    (global.set $mask (i32.const 1023))
    (global.set $shift (i64.const 54))
    (global.set $count (i32.const 0))
    (memory.fill (i32.const 0) (i32.const 0) (i32.const 16384)))

  (func $slotOf (param $key i64) (param $shift i64) (result i32)
    (i32.wrap_i64 (i64.shr_u (i64.mul (local.get $key) (i64.const 0x9e3779b97f4a7c15)) (local.get $shift))))

;; A new word, into the free slot at `at`: numbered, its lanes added to the order list, the
  ;; table grown when half full; returns 1 once maxWords words are there. Its lanes are hashed
  ;; from its `len` bytes at `from` (a word of up to 8 bytes, keyed by them), or are its key and
  ;; `hi` (a longer one: hi << 32 | lo with the top bit set, and hi whole in the slot).
  (func $insert (param $at i32) (param $key i64) (param $hi i32) (param $from i32) (param $len i32) (param $maxWords i32) (result i32)
    (local $number i32) (local $order i32) (local $lo i32) (local $c i32) (local $end i32)
    (if (i64.lt_s (local.get $key) (i64.const 0))
      (then (local.set $lo (i32.wrap_i64 (local.get $key))))
      (else
        (local.set $hi (i32.const 0x811c9dc5))
        (local.set $lo (i32.const 0x9747b28c))
        (local.set $end (i32.add (local.get $from) (local.get $len)))
        (loop $chars
          (local.set $c (i32.load8_u (local.get $from)))
          (local.set $hi (i32.mul (i32.xor (local.get $hi) (local.get $c)) (i32.const 0x01000193)))
          (local.set $lo (i32.mul (i32.xor (local.get $lo) (local.get $c)) (i32.const 0x5bd1e995)))
          (local.set $from (i32.add (local.get $from) (i32.const 1)))
          (br_if $chars (i32.lt_u (local.get $from) (local.get $end))))))
    (local.set $number (global.get $count))
    (global.set $count (i32.add (local.get $number) (i32.const 1)))
    (i64.store (local.get $at) (local.get $key))
    (i32.store offset=8 (local.get $at) (i32.add (local.get $number) (i32.const 1)))
    (i32.store offset=12 (local.get $at) (local.get $hi))
    (local.set $order (i32.add (i32.const 0x400000) (i32.shl (local.get $number) (i32.const 3))))
    (i32.store (local.get $order) (local.get $hi))
    (i32.store offset=4 (local.get $order) (local.get $lo))
    ;; at most half full, up to the region's 131072 slots (the order list's 65536 words)
    (if (i32.and (i32.gt_u (i32.shl (global.get $count) (i32.const 1)) (global.get $mask))
                 (i32.lt_u (global.get $mask) (i32.const 131071)))
      (then (call $grow)))
    (i32.ge_u (global.get $count) (local.get $maxWords)))

;; A word of 1 to 8 lowered word bytes at `start`, written there by the caller
  ;; (tokenize.ts, for the ASCII words of a text that is not all ASCII): added unless the table
  ;; holds it; returns 1 once maxWords words are there. The probe is scan's for a short word,
  ;; repeated here because a call per word made scan a quarter slower.
  (func (export "short") (param $start i32) (param $len i32) (param $maxWords i32) (result i32)
    (local $key i64) (local $at i32) (local $slot i32)
    (local.set $key (i64.and (i64.load (local.get $start))
      (i64.shr_u (i64.const -1) (i64.extend_i32_u (i32.sub (i32.const 64) (i32.shl (local.get $len) (i32.const 3)))))))
    (local.set $slot (i32.wrap_i64 (i64.shr_u (i64.mul (local.get $key) (i64.const 0x9e3779b97f4a7c15)) (global.get $shift))))
    (loop $probe
      (local.set $at (i32.add (global.get $table) (i32.shl (local.get $slot) (i32.const 4))))
      (if (i64.eq (i64.load (local.get $at)) (local.get $key)) (then (return (i32.const 0))))
      (if (i32.load offset=8 (local.get $at))
        (then
          (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $mask)))
          (br $probe))))
    (call $insert (local.get $at) (local.get $key) (i32.const 0) (local.get $start) (local.get $len) (local.get $maxWords)))

  ;; A word by its two FNV lanes (hi, lo, before fmix32): one of more than 8 bytes (scan), or
  ;; one the caller hashed (tokenize.ts: a longer or non-ASCII word of a text that is not all
  ;; ASCII). Keyed by the lanes with the top bit set, which no short word's key has, and hi
  ;; whole beside the key; added unless the table holds it; returns 1 once maxWords words are there.
  (func $hashed (export "hashed") (param $hi i32) (param $lo i32) (param $maxWords i32) (result i32)
    (local $key i64) (local $at i32) (local $slot i32)
    (local.set $key (i64.or (i64.or (i64.shl (i64.extend_i32_u (local.get $hi)) (i64.const 32)) (i64.extend_i32_u (local.get $lo)))
                            (i64.const 0x8000000000000000)))
    (local.set $slot (i32.wrap_i64 (i64.shr_u (i64.mul (local.get $key) (i64.const 0x9e3779b97f4a7c15)) (global.get $shift))))
    (loop $probe
      (local.set $at (i32.add (global.get $table) (i32.shl (local.get $slot) (i32.const 4))))
      (if (i32.and (i64.eq (i64.load (local.get $at)) (local.get $key))
                   (i32.eq (i32.load offset=12 (local.get $at)) (local.get $hi)))
        (then (return (i32.const 0))))
      (if (i32.load offset=8 (local.get $at))
        (then
          (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $mask)))
          (br $probe))))
    (call $insert (local.get $at) (local.get $key) (local.get $hi) (i32.const 0) (i32.const 0) (local.get $maxWords)))

  ;; Twice the slots, in the other region.
  (func $grow
    (local $at i32) (local $end i32) (local $into i32) (local $mask i32) (local $shift i64)
    (local $slot i32) (local $to i32)
    (local.set $at (global.get $table))
    (local.set $end (i32.add (local.get $at) (i32.shl (i32.add (global.get $mask) (i32.const 1)) (i32.const 4))))
    (local.set $into (select (i32.const 0x200000) (i32.const 0) (i32.eqz (global.get $table))))
    (local.set $mask (i32.add (i32.shl (global.get $mask) (i32.const 1)) (i32.const 1)))
    (local.set $shift (i64.sub (global.get $shift) (i64.const 1)))
    (memory.fill (local.get $into) (i32.const 0) (i32.shl (i32.add (local.get $mask) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (if (i32.load offset=8 (local.get $at))
          (then
            (local.set $slot (call $slotOf (i64.load (local.get $at)) (local.get $shift)))
            (block $placed
              (loop $probe
                (local.set $to (i32.add (local.get $into) (i32.shl (local.get $slot) (i32.const 4))))
                (br_if $placed (i32.eqz (i32.load offset=8 (local.get $to))))
                (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (local.get $mask)))
                (br $probe)))
            (v128.store (local.get $to) (v128.load (local.get $at)))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $each)))
    (global.set $table (local.get $into))
    (global.set $mask (local.get $mask))
    (global.set $shift (local.get $shift)))

  ;; The first pass: each byte of [from, from + n) its lower case if it is a letter or digit,
  ;; else 0; and the 128 bytes after it 0 (the last block's rest, the second pass's look-ahead).
  (func $lower (param $from i32) (param $n i32)
    (local $i i32) (local $end i32) (local $v v128) (local $upper v128) (local $word v128)
    (local.set $end (i32.add (local.get $from) (local.get $n)))
    (memory.fill (local.get $end) (i32.const 0) (i32.const 128))
    (local.set $i (local.get $from))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $v (v128.load (local.get $i)))
        (local.set $upper (i8x16.lt_u (i8x16.sub (local.get $v) (v128.const i8x16 65 65 65 65 65 65 65 65 65 65 65 65 65 65 65 65))
                                      (v128.const i8x16 26 26 26 26 26 26 26 26 26 26 26 26 26 26 26 26)))
        (local.set $word
          (v128.or (local.get $upper)
            (v128.or (i8x16.lt_u (i8x16.sub (local.get $v) (v128.const i8x16 97 97 97 97 97 97 97 97 97 97 97 97 97 97 97 97))
                                 (v128.const i8x16 26 26 26 26 26 26 26 26 26 26 26 26 26 26 26 26))
                     (i8x16.lt_u (i8x16.sub (local.get $v) (v128.const i8x16 48 48 48 48 48 48 48 48 48 48 48 48 48 48 48 48))
                                 (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10)))))
        (v128.store (local.get $i)
          (v128.and (local.get $word)
            (v128.or (local.get $v) (v128.and (local.get $upper) (v128.const i8x16 32 32 32 32 32 32 32 32 32 32 32 32 32 32 32 32)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $blocks))))

  ;; A bit per word byte (not 0) of the 64 lowered bytes at p, the first byte the lowest bit.
  (func $mask64 (param $p i32) (result i64)
    (i64.or
      (i64.or
        (i64.extend_i32_u (i8x16.bitmask (i8x16.ne (v128.load (local.get $p)) (v128.const i64x2 0 0))))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.ne (v128.load offset=16 (local.get $p)) (v128.const i64x2 0 0)))) (i64.const 16)))
      (i64.or
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.ne (v128.load offset=32 (local.get $p)) (v128.const i64x2 0 0)))) (i64.const 32))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.ne (v128.load offset=48 (local.get $p)) (v128.const i64x2 0 0)))) (i64.const 48)))))

  ;; Adds the words of the n bytes at `from` (all ASCII): 0 once maxWords words are there
  ;; (tokenize.ts addAscii's false), else 1.
  (func (export "scan") (param $from i32) (param $n i32) (param $maxWords i32) (result i32)
    (local $pos i32) (local $end i32) (local $m i64) (local $next i64) (local $carry i64)
    (local $starts i64) (local $b i64) (local $len i32) (local $start i32) (local $key i64)
    (local $hi i32) (local $lo i32) (local $i i32) (local $c i32) (local $at i32) (local $slot i32)
    (call $lower (local.get $from) (local.get $n))
    (local.set $pos (local.get $from))
    (local.set $end (i32.add (local.get $from) (local.get $n)))
    (local.set $m (call $mask64 (local.get $pos)))
    (block $out
      (loop $chunks
        (br_if $out (i32.ge_u (local.get $pos) (local.get $end)))
        (local.set $next (call $mask64 (i32.add (local.get $pos) (i32.const 64))))
        ;; a word byte whose byte before is not one (the carry: the last of the chunk before)
        (local.set $starts (i64.and (local.get $m)
          (i64.xor (i64.or (i64.shl (local.get $m) (i64.const 1)) (local.get $carry)) (i64.const -1))))
        (block $chunkDone
          (loop $words
            (br_if $chunkDone (i64.eqz (local.get $starts)))
            (local.set $b (i64.ctz (local.get $starts)))
            (local.set $starts (i64.and (local.get $starts) (i64.sub (local.get $starts) (i64.const 1))))
            (local.set $start (i32.add (local.get $pos) (i32.wrap_i64 (local.get $b))))
            ;; its length: the run of set bits from b, into the next chunk if it reaches its end
            (local.set $len (i32.wrap_i64 (i64.ctz (i64.xor (i64.shr_u (local.get $m) (local.get $b)) (i64.const -1)))))
            (if (i32.eq (i32.add (local.get $len) (i32.wrap_i64 (local.get $b))) (i32.const 64))
              (then
                (local.set $len (i32.add (local.get $len) (i32.wrap_i64 (i64.ctz (i64.xor (local.get $next) (i64.const -1))))))
                (if (i32.eq (i32.add (local.get $len) (i32.wrap_i64 (local.get $b))) (i32.const 128))
                  (then
                    ;; 65 bytes or more: read on to its end (the bytes after the text are 0)
                    (local.set $i (i32.add (local.get $start) (local.get $len)))
                    (loop $rest
                      (if (i32.load8_u (local.get $i))
                        (then (local.set $i (i32.add (local.get $i) (i32.const 1))) (br $rest))))
                    (local.set $len (i32.sub (local.get $i) (local.get $start)))))))
            (if (i32.le_u (local.get $len) (i32.const 8))
              (then
                ;; the word's bytes are its key (no word byte is 0 or over 0x7f: the length is in
                ;; it, and its top bit is clear)
                (local.set $key (i64.and (i64.load (local.get $start))
                  (i64.shr_u (i64.const -1) (i64.extend_i32_u (i32.sub (i32.const 64) (i32.shl (local.get $len) (i32.const 3)))))))
                (local.set $slot (i32.wrap_i64 (i64.shr_u (i64.mul (local.get $key) (i64.const 0x9e3779b97f4a7c15)) (global.get $shift))))
                (loop $probe
                  (local.set $at (i32.add (global.get $table) (i32.shl (local.get $slot) (i32.const 4))))
                  (br_if $words (i64.eq (i64.load (local.get $at)) (local.get $key)))
                  (if (i32.load offset=8 (local.get $at))
                    (then
                      (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $mask)))
                      (br $probe)))))
              (else
                (br_if $words (i32.gt_u (local.get $len) (i32.const 100)))
                (local.set $hi (i32.const 0x811c9dc5))
                (local.set $lo (i32.const 0x9747b28c))
                (local.set $i (local.get $start))
                (local.set $at (i32.add (local.get $start) (local.get $len)))
                (loop $chars
                  (local.set $c (i32.load8_u (local.get $i)))
                  (local.set $hi (i32.mul (i32.xor (local.get $hi) (local.get $c)) (i32.const 0x01000193)))
                  (local.set $lo (i32.mul (i32.xor (local.get $lo) (local.get $c)) (i32.const 0x5bd1e995)))
                  (local.set $i (i32.add (local.get $i) (i32.const 1)))
                  (br_if $chars (i32.lt_u (local.get $i) (local.get $at))))
                (if (call $hashed (local.get $hi) (local.get $lo) (local.get $maxWords))
                  (then (return (i32.const 0))))
                (br $words)))
            ;; a new word: into the free slot the probe stopped at
            (if (call $insert (local.get $at) (local.get $key) (i32.const 0) (local.get $start) (local.get $len) (local.get $maxWords))
              (then (return (i32.const 0))))
            (br $words)))
        (local.set $carry (i64.shr_u (local.get $m) (i64.const 63)))
        (local.set $m (local.get $next))
        (local.set $pos (i32.add (local.get $pos) (i32.const 64)))
        (br $chunks)))
    (i32.const 1)))
