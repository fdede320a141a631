;; Recall's words of all-ASCII text (tokenize.ts addAscii, the same words in the same order),
;; in WebAssembly: the per-byte loop and the table of distinct words cost about 6 ns per byte
;; in JavaScript (bounds checks, and the table's code around every word) and about a third
;; of that here. ascii-words.ts drives it; `npm run build:wasm` compiles this file into
;; ascii-words-wasm.ts, and a test checks that the two agree.
;;
;; Memory (64 KiB pages):
;;   [0, 4 MiB)          two table regions of 2 MiB, 131072 slots of 16 bytes each:
;;                       hi, lo (the word's lanes before fmix32), number + 1 (0: free), unused
;;   [4 MiB, +512 KiB)   the words in first-use order: hi, lo (65536 at most)
;;   [4.5 MiB, +256)     per byte: its lower case when it is a word byte (letter, digit), else 0
;;   [4.5 MiB + 4 KiB, ) the text's bytes, written by ascii-words.ts (memory grows for more)
(module
  (memory (export "memory") 74)
  (global $table (mut i32) (i32.const 0))
  (global $mask (mut i32) (i32.const 1023))
  (global $shift (mut i32) (i32.const 22))
  (global $count (export "count") (mut i32) (i32.const 0))

  ;; An empty table of 1024 slots, in region A. A step's text has a few hundred distinct words:
  ;; from 1024 slots the table rarely grows and its probes stay short (the ingest bench's texts,
  ;; against 256 slots: 64 KB ones 3.1 -> 2.9 ns per byte, 2 KB ones 5.1 -> 4.3-5.1).
  (func $reset (export "reset")
    (global.set $table (i32.const 0))
    (global.set $mask (i32.const 1023))
    (global.set $shift (i32.const 22))
    (global.set $count (i32.const 0))
    (memory.fill (i32.const 0) (i32.const 0) (i32.const 16384)))

  ;; The word's number if it is there, else ~ the number it now has (WordTable.add).
  (func $add (export "add") (param $hi i32) (param $lo i32) (result i32)
    (local $slot i32) (local $at i32) (local $n i32) (local $number i32) (local $order i32)
    (local.set $slot
      (i32.shr_u (i32.mul (i32.xor (local.get $hi) (local.get $lo)) (i32.const 0x9e3779b1)) (global.get $shift)))
    (block $free
      (loop $probe
        (local.set $at (i32.add (global.get $table) (i32.shl (local.get $slot) (i32.const 4))))
        (local.set $n (i32.load offset=8 (local.get $at)))
        (br_if $free (i32.eqz (local.get $n)))
        (if (i32.and (i32.eq (i32.load (local.get $at)) (local.get $hi))
                     (i32.eq (i32.load offset=4 (local.get $at)) (local.get $lo)))
          (then (return (i32.sub (local.get $n) (i32.const 1)))))
        (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $mask)))
        (br $probe)))
    (local.set $number (global.get $count))
    (global.set $count (i32.add (local.get $number) (i32.const 1)))
    (i32.store (local.get $at) (local.get $hi))
    (i32.store offset=4 (local.get $at) (local.get $lo))
    (i32.store offset=8 (local.get $at) (i32.add (local.get $number) (i32.const 1)))
    (local.set $order (i32.add (i32.const 0x400000) (i32.shl (local.get $number) (i32.const 3))))
    (i32.store (local.get $order) (local.get $hi))
    (i32.store offset=4 (local.get $order) (local.get $lo))
    ;; at most half full, up to the region's 131072 slots (the order list's 65536 words)
    (if (i32.and (i32.gt_u (i32.shl (global.get $count) (i32.const 1)) (global.get $mask))
                 (i32.lt_u (global.get $mask) (i32.const 131071)))
      (then (call $grow)))
    (i32.xor (local.get $number) (i32.const -1)))

  ;; Twice the slots, in the other region.
  (func $grow
    (local $at i32) (local $end i32) (local $into i32) (local $mask i32) (local $shift i32)
    (local $slot i32) (local $to i32)
    (local.set $at (global.get $table))
    (local.set $end (i32.add (local.get $at) (i32.shl (i32.add (global.get $mask) (i32.const 1)) (i32.const 4))))
    (local.set $into (select (i32.const 0x200000) (i32.const 0) (i32.eqz (global.get $table))))
    (local.set $mask (i32.add (i32.shl (global.get $mask) (i32.const 1)) (i32.const 1)))
    (local.set $shift (i32.sub (global.get $shift) (i32.const 1)))
    (memory.fill (local.get $into) (i32.const 0) (i32.shl (i32.add (local.get $mask) (i32.const 1)) (i32.const 4)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (if (i32.load offset=8 (local.get $at))
          (then
            (local.set $slot
              (i32.shr_u (i32.mul (i32.xor (i32.load (local.get $at)) (i32.load offset=4 (local.get $at))) (i32.const 0x9e3779b1))
                         (local.get $shift)))
            (block $placed
              (loop $probe
                (local.set $to (i32.add (local.get $into) (i32.shl (local.get $slot) (i32.const 4))))
                (br_if $placed (i32.eqz (i32.load offset=8 (local.get $to))))
                (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (local.get $mask)))
                (br $probe)))
            (i64.store (local.get $to) (i64.load (local.get $at)))
            (i32.store offset=8 (local.get $to) (i32.load offset=8 (local.get $at)))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $each)))
    (global.set $table (local.get $into))
    (global.set $mask (local.get $mask))
    (global.set $shift (local.get $shift)))

  ;; Adds the words of the n bytes at `from` (all ASCII): 0 once maxWords words are there
  ;; (tokenize.ts addAscii's false), else 1.
  (func (export "scan") (param $from i32) (param $n i32) (param $maxWords i32) (result i32)
    (local $i i32) (local $end i32) (local $c i32) (local $start i32) (local $hi i32) (local $lo i32) (local $at i32)
    (local.set $i (local.get $from))
    (local.set $end (i32.add (local.get $from) (local.get $n)))
    (block $out
      (loop $words
        (block $found
          (loop $skip
            (br_if $out (i32.ge_u (local.get $i) (local.get $end)))
            (local.set $c (i32.load8_u offset=0x480000 (i32.load8_u (local.get $i))))
            (br_if $found (local.get $c))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $skip)))
        (local.set $start (local.get $i))
        (local.set $hi (i32.mul (i32.xor (i32.const 0x811c9dc5) (local.get $c)) (i32.const 0x01000193)))
        (local.set $lo (i32.mul (i32.xor (i32.const 0x9747b28c) (local.get $c)) (i32.const 0x5bd1e995)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (block $wordEnd
          (loop $chars
            (br_if $wordEnd (i32.ge_u (local.get $i) (local.get $end)))
            (local.set $c (i32.load8_u offset=0x480000 (i32.load8_u (local.get $i))))
            (br_if $wordEnd (i32.eqz (local.get $c)))
            (local.set $hi (i32.mul (i32.xor (local.get $hi) (local.get $c)) (i32.const 0x01000193)))
            (local.set $lo (i32.mul (i32.xor (local.get $lo) (local.get $c)) (i32.const 0x5bd1e995)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $chars)))
        (if (i32.le_u (i32.sub (local.get $i) (local.get $start)) (i32.const 100))
          (then
            ;; most words were seen before, in their first slot: no call for those
            (local.set $at (i32.add (global.get $table)
              (i32.shl (i32.shr_u (i32.mul (i32.xor (local.get $hi) (local.get $lo)) (i32.const 0x9e3779b1)) (global.get $shift))
                       (i32.const 4))))
            (if (i32.eqz (i32.and (i32.and (i32.eq (i32.load (local.get $at)) (local.get $hi))
                                           (i32.eq (i32.load offset=4 (local.get $at)) (local.get $lo)))
                                  (i32.ne (i32.load offset=8 (local.get $at)) (i32.const 0))))
              (then
                (if (i32.and (i32.lt_s (call $add (local.get $hi) (local.get $lo)) (i32.const 0))
                             (i32.ge_u (global.get $count) (local.get $maxWords)))
                  (then (return (i32.const 0))))))))
        ;; the byte that ended the word is no word byte
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $words)))
    (i32.const 1)))
