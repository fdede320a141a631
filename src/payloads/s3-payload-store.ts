/**
 * @module payloads/s3-payload-store
 * Payloads as objects in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, ...), through the
 * official @aws-sdk/client-s3, so that any number of tapedeck instances share them. The key is
 * the payload's name, "sha256/<hex>", under the prefix when one is set ("<prefix>/sha256/<hex>").
 * Credentials and region come from the standard AWS environment (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_REGION, profiles, instance roles), as the SDK reads them.
 *
 * Content-addressed and write-once, as every backend: a put of bytes already held (same key,
 * same length) writes nothing; a put otherwise writes the whole object at once (a PUT is
 * atomic: readers see the old object or the new one, never a prefix), so concurrent puts of
 * the same bytes from several instances are harmless. Reads verify the hash.
 *
 * An absent object is absent (undefined), answered by the server as such (404); only a store
 * that cannot be reached or answers with a server-side fault is PayloadStoreUnavailableError,
 * so a missing payload reads as `unavailable` only while the store is unreachable.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import {
  type PayloadStore,
  DEFAULT_PAYLOAD_MEDIA_TYPE,
  PayloadStoreUnavailableError,
  asPlainBytes,
  parsePayloadRef,
  payloadRefOf,
  verifyPayload,
} from './payload-store.js';

export interface S3PayloadStoreSettings {
  bucket: string;
  /** objects are <prefix>/sha256/<hex>; absent or empty: sha256/<hex> */
  prefix?: string | null;
  /** an S3-compatible server's URL; absent: AWS's endpoint for the region */
  endpoint?: string | null;
  /** <endpoint>/<bucket>/<key> rather than <bucket>.<endpoint>/<key> */
  forcePathStyle?: boolean;
  /** overrides for the client (tests: credentials, retries); the environment supplies the rest */
  client?: S3ClientConfig;
}

// A request that hangs would hold an export's transaction open: every call has a deadline.
const REQUEST_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 5_000;

export function createS3PayloadStore(settings: S3PayloadStoreSettings): PayloadStore & { close(): void } {
  const client = new S3Client({
    // S3-compatible servers ignore the region, but the SDK needs one to sign.
    region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle ?? false,
    requestHandler: { requestTimeout: REQUEST_TIMEOUT_MS, connectionTimeout: CONNECT_TIMEOUT_MS },
    ...settings.client,
  });
  const Bucket = settings.bucket;
  const prefix = settings.prefix ? `${settings.prefix.replace(/\/+$/, '')}/` : '';
  const where = `s3://${Bucket}/${prefix}`;
  const keyOf = (ref: string) => {
    parsePayloadRef(ref);
    return `${prefix}${ref}`;
  };

  /** Runs an S3 call; a fault of the store (unreachable, 5xx, throttled, denied) is unavailable. */
  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw new PayloadStoreUnavailableError(
        `the S3 payload store ${where} cannot ${what}: ${(error as Error).name}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  };

  /** The object's size, or undefined when there is none under the key. */
  const sizeOf = async (Key: string): Promise<number | undefined> => {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket, Key }));
      return head.ContentLength;
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw error;
    }
  };

  const uploads = new Map<string, Promise<string>>();
  return {
    put(bytes, mediaType = DEFAULT_PAYLOAD_MEDIA_TYPE) {
      const ref = payloadRefOf(bytes);
      const Key = keyOf(ref);
      // Concurrent puts of one payload in this process share one upload: the bytes are the
      // same, and some S3-compatible servers fail concurrent writes of one key.
      const pending = uploads.get(Key);
      if (pending) return pending;
      const upload = call('write', async () => {
        // Write-once: an object of the right length under this name is these bytes.
        if ((await sizeOf(Key)) === bytes.byteLength) return ref;
        // A copy: the caller may change its buffer once put resolves, and the SDK may read the
        // body again on a retry.
        await client.send(new PutObjectCommand({ Bucket, Key, Body: Buffer.from(bytes), ContentType: mediaType }));
        return ref;
      }).finally(() => uploads.delete(Key));
      uploads.set(Key, upload);
      return upload;
    },

    async get(ref) {
      const Key = keyOf(ref);
      const bytes = await call('read', async () => {
        try {
          const object = await client.send(new GetObjectCommand({ Bucket, Key }));
          return object.Body ? await object.Body.transformToByteArray() : new Uint8Array(0);
        } catch (error) {
          if (isAbsent(error)) return undefined;
          throw error;
        }
      });
      return bytes === undefined ? undefined : verifyPayload(ref, asPlainBytes(bytes), 's3');
    },

    async has(ref) {
      const Key = keyOf(ref);
      return (await call('read', () => sizeOf(Key))) !== undefined;
    },

    async delete(ref) {
      const Key = keyOf(ref);
      return call('delete', async () => {
        // S3 answers a delete of an absent key with success: ask first, to say whether it was held.
        if ((await sizeOf(Key)) === undefined) return false;
        await client.send(new DeleteObjectCommand({ Bucket, Key }));
        return true;
      });
    },

    close() {
      client.destroy();
    },
  };
}

/**
 * The server said there is no such object (not: the server could not be asked). A missing
 * bucket is a fault of the deployment, not an absent payload.
 */
function isAbsent(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  if (e?.name === 'NoSuchBucket') return false;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
