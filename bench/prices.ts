/**
 * AWS's published prices, us-east-1, as the cost benches and docs/PERFORMANCE.md's cost model use
 * them. Read 2026-11-28 from stored copies of the pages named beside each (this machine cannot
 * reach AWS): check them against the pages before quoting a bill.
 */
export const PRICES = {
  /** aws.amazon.com/dynamodb/pricing/on-demand/ (Standard table class). */
  dynamodbWriteUnit: 0.625 / 1e6,
  dynamodbReadUnit: 0.125 / 1e6,
  /** aws.amazon.com/s3/pricing/ (S3 Standard): PUT, COPY, POST, LIST per 1,000; GET per 1,000. */
  s3Put: 0.005 / 1_000,
  s3Get: 0.0004 / 1_000,
  /** aws.amazon.com/sqs/pricing/: FIFO and standard requests, per million (64 KB chunks). */
  sqsFifoRequest: 0.5 / 1e6,
  sqsStandardRequest: 0.4 / 1e6,
  /** aws.amazon.com/lambda/pricing/ (arm64): per request, per GB-second. */
  lambdaRequest: 0.2 / 1e6,
  lambdaGbSecond: 0.0000133334,
  /** aws.amazon.com/cloudfront/pricing/ (United States): HTTPS per 10,000, data out first 10 TB. */
  cloudfrontHttpsRequest: 0.01 / 10_000,
  cloudfrontGbOut: 0.085,
  /** Past the first 1,000 paths a month (one `#tag` item is one path). */
  cloudfrontInvalidationPath: 0.005,
} as const;

/** Dollars of what a run wrote: DynamoDB write units and S3 PUTs, at the prices above. */
export const writeBill = (wcu: number, puts: number): number =>
  wcu * PRICES.dynamodbWriteUnit + puts * PRICES.s3Put;
