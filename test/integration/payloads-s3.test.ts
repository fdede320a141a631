/**
 * The S3 payload backend against the one payload-store contract, on a local S3-compatible
 * server (test/helpers/s3-server.ts), plus what only it promises: objects under the prefix at
 * the payload's own name, and "absent" told apart from "unreachable".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeleteObjectsCommand } from '@aws-sdk/client-s3';
import { describePayloadStoreContract } from '../contracts/payload-store.contract.js';
import { S3RVER_CREDENTIALS, startS3Server, type TestS3Server } from '../helpers/s3-server.js';
import { createS3PayloadStore } from '../../src/payloads/s3-payload-store.js';
import { PayloadStoreUnavailableError, payloadRefOf } from '../../src/payloads/payload-store.js';

let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(async () => s3?.close());

const storeOn = (server: { endpoint: string; bucket: string }, prefix?: string) =>
  createS3PayloadStore({
    bucket: server.bucket,
    endpoint: server.endpoint,
    prefix,
    forcePathStyle: true,
    client: { credentials: S3RVER_CREDENTIALS, region: 'us-east-1', maxAttempts: 1 },
  });

async function emptyBucket(): Promise<void> {
  const keys = await s3.keys();
  if (keys.length === 0) return;
  await s3.client.send(
    new DeleteObjectsCommand({ Bucket: s3.bucket, Delete: { Objects: keys.map((Key) => ({ Key })) } }),
  );
}

describePayloadStoreContract('s3 (s3rver)', async () => {
  await emptyBucket();
  const store = storeOn(s3, 'contract');
  return {
    store,
    // Overwritten through the S3 API itself, as another writer of the bucket could.
    corrupt: (ref, bytes) => s3.write(`contract/${ref}`, bytes),
    cleanup: async () => store.close(),
  };
});

describe('S3 payload store', () => {
  it('keeps an object at <prefix>/sha256/<hex>, or at sha256/<hex> with no prefix', async () => {
    await emptyBucket();
    const bytes = new TextEncoder().encode('{"role":"user","content":"a long prompt"}');
    const ref = payloadRefOf(bytes);
    const prefixed = storeOn(s3, 'tenant-a/payloads');
    const bare = storeOn(s3);
    await prefixed.put(bytes, 'application/json');
    await bare.put(bytes, 'application/json');
    expect(await s3.keys()).toEqual([`tenant-a/payloads/${ref}`, ref].sort());
    expect(await s3.read(`tenant-a/payloads/${ref}`)).toEqual(bytes);
    prefixed.close();
    bare.close();
  });

  it('writes an object once: a second put of the same bytes leaves the stored object alone', async () => {
    await emptyBucket();
    const store = storeOn(s3, 'once');
    const bytes = new TextEncoder().encode('same bytes');
    const ref = await store.put(bytes);
    // Replaced behind the store's back by bytes of the same length: a put that wrote again
    // would repair them; write-once leaves them, and the read then refuses them as corrupt.
    await s3.write(`once/${ref}`, new TextEncoder().encode('SAME BYTES'));
    await store.put(bytes);
    expect(new TextDecoder().decode(await s3.read(`once/${ref}`))).toBe('SAME BYTES');
    store.close();
  });

  it('answers an absent object as absent, and an unreachable server as unavailable', async () => {
    const store = storeOn(s3, 'absent');
    const ref = payloadRefOf(new TextEncoder().encode('never stored'));
    expect(await store.get(ref)).toBeUndefined();
    expect(await store.has(ref)).toBe(false);
    store.close();

    const gone = await startS3Server('gone-bucket');
    const away = storeOn(gone, 'absent');
    await gone.close();
    await expect(away.get(ref)).rejects.toBeInstanceOf(PayloadStoreUnavailableError);
    await expect(away.has(ref)).rejects.toBeInstanceOf(PayloadStoreUnavailableError);
    await expect(away.put(new Uint8Array([1, 2, 3]))).rejects.toBeInstanceOf(PayloadStoreUnavailableError);
    away.close();
  });

  it('answers a bucket that does not exist as unavailable, not as an absent payload', async () => {
    const store = storeOn({ endpoint: s3.endpoint, bucket: 'no-such-bucket' });
    const ref = payloadRefOf(new TextEncoder().encode('x'));
    await expect(store.get(ref)).rejects.toBeInstanceOf(PayloadStoreUnavailableError);
    store.close();
  });
});
