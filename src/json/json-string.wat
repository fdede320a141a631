;; The body of an ASCII string's JSON (what JSON.stringify writes between the quotes), for
;; json-string.ts: JSON.stringify of a long string costs about 4 ns per character on Node 20,
;; this 0.4-1.2 ns (16 bytes at a time while nothing needs an escape). Escapes as
;; JSON.stringify does: \" \\ \b \f \n \r \t, and \u00xx (lower-case hex) for other controls.
;; `npm run build:wasm` compiles this file into json-string-wasm.ts, and a test checks that the
;; two agree.
;;
;; Memory (one 64 KiB page is 65536 bytes; 8 pages, never grown):
;;   [0, 256)        per byte: 0 when it is written as it is, else the character after the
;;                   backslash ('u' for \u00xx); written by json-string.ts
;;   [256, 272)      the hex digits, written by json-string.ts
;;   [1024, +64 KiB) the text's bytes (json-string.ts hands longer texts over in pieces)
;;   [66560, )       their JSON: at most 6 bytes per byte
(module
  (memory (export "memory") 8)

  ;; Writes the JSON of the n bytes at `from` to `to`; returns its length.
  (func (export "escape") (param $from i32) (param $n i32) (param $to i32) (result i32)
    (local $i i32) (local $end i32) (local $o i32) (local $run i32) (local $b i32) (local $e i32)
    (local $v v128) (local $hits i32)
    (local.set $i (local.get $from))
    (local.set $end (i32.add (local.get $from) (local.get $n)))
    (local.set $o (local.get $to))
    (block $done
      (loop $runs
        ;; a run of bytes written as they are: found, then copied at once
        (local.set $run (local.get $i))
        (block $stop
          ;; 16 bytes at a time: a control, a quote or a backslash among them ends the run
          (block $tail
            (loop $sixteen
              (br_if $tail (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $end)))
              (local.set $v (v128.load (local.get $i)))
              (local.set $hits (i8x16.bitmask
                (v128.or (v128.or (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 32)))
                                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 34))))
                         (i8x16.eq (local.get $v) (i8x16.splat (i32.const 92))))))
              (if (local.get $hits)
                (then
                  (local.set $i (i32.add (local.get $i) (i32.ctz (local.get $hits))))
                  (br $stop)))
              (local.set $i (i32.add (local.get $i) (i32.const 16)))
              (br $sixteen)))
          ;; the last bytes, one at a time
          (loop $one
            (br_if $stop (i32.ge_u (local.get $i) (local.get $end)))
            (br_if $stop (i32.load8_u (i32.load8_u (local.get $i))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $one)))
        (memory.copy (local.get $o) (local.get $run) (i32.sub (local.get $i) (local.get $run)))
        (local.set $o (i32.add (local.get $o) (i32.sub (local.get $i) (local.get $run))))
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        ;; the byte that ended the run, escaped
        (local.set $b (i32.load8_u (local.get $i)))
        (local.set $e (i32.load8_u (local.get $b)))
        (i32.store8 (local.get $o) (i32.const 92))
        (i32.store8 offset=1 (local.get $o) (local.get $e))
        (if (i32.eq (local.get $e) (i32.const 117))
          (then
            (i32.store8 offset=2 (local.get $o) (i32.const 48))
            (i32.store8 offset=3 (local.get $o) (i32.const 48))
            (i32.store8 offset=4 (local.get $o) (i32.load8_u offset=256 (i32.shr_u (local.get $b) (i32.const 4))))
            (i32.store8 offset=5 (local.get $o) (i32.load8_u offset=256 (i32.and (local.get $b) (i32.const 15))))
            (local.set $o (i32.add (local.get $o) (i32.const 6))))
          (else (local.set $o (i32.add (local.get $o) (i32.const 2)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $runs)))
    (i32.sub (local.get $o) (local.get $to))))
