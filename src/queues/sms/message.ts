/** An SMS to send (fd-sms queue): the row holds the rest. */
export type SmsMessage = { accountId: string; smsId: string; baseUrl: string };
