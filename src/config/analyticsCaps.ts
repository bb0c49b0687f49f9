/** The largest value each cap may be set to (the OpenAPI document states these as maxItems). */
export const maxAnalyticsCaps = { exceptions: 5000, comparison: 5000, trend: 200_000, counts: 1_000_000, backlog: 1_000_000 } as const;

/** Scan caps; each read puts the caps it used into its evidence parameters. */
export type AnalyticsCaps = {
  /** Rows counted for LOW_STOCK, EXPIRING_STOCK, DELIVERY_EXCEPTIONS, RECEIPT_DISCREPANCIES. */
  readonly counts: number;
  /** Pending approvals read for APPROVAL_BACKLOG (oldest first). */
  readonly backlog: number;
  /** Daily consumption rows read for CONSUMPTION_TREND and the consumption trend. */
  readonly trend: number;
  /** Exceptions listed by the exceptions report. */
  readonly exceptions: number;
  /** Clinics listed by the clinic comparison. */
  readonly comparison: number;
};
