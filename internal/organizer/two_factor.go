package organizer

// Two-factor sign-in (docs/cabinet.md, "Two-factor sign-in"): a TOTP
// authenticator (RFC 6238: 6 digits, 30 s, SHA-1, as every authenticator
// app reads) and ten one-time recovery codes, of the person. After the
// password (or a sign-in link) the cabinet asks for a code; each code is
// accepted once (its time step is spent, and every older one with it), and
// tries are limited as passwords are. The secret is sealed at rest.

import (
	"context"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/store"
)

// TwoFactorIssuer names the cabinet in the person's authenticator app.
const TwoFactorIssuer = "Organizer's cabinet"

// RecoveryCodes is how many recovery codes an enrolment makes.
const RecoveryCodes = 10

// The two-factor budgets: wrong codes per person (from any client but
// the person's known addresses), per client and person (TwoFactorPersonLimit
// too), and tries per client, as the password's (a burst, then one per
// interval).
var (
	TwoFactorPersonLimit = ratelimit.Limit{Rate: 1.0 / 60, Burst: 5}
	TwoFactorClientLimit = ratelimit.Limit{Rate: 1.0 / 10, Burst: 30}
)

// Errors of the second factor.
var (
	// ErrBadCode: the code is not the authenticator's now, nor an unused
	// recovery code; or it was used already.
	ErrBadCode = errors.New("wrong or used two-factor code")
	// ErrTwoFactorUnavailable: this deployment has no secret to seal
	// authenticators with.
	ErrTwoFactorUnavailable = errors.New("two-factor sign-in is not configured")
	// ErrTwoFactorOn: the person has a confirmed authenticator.
	ErrTwoFactorOn = store.ErrTwoFactorOn
	// ErrTwoFactorRequired: the company requires the role's second factor;
	// it cannot be turned off.
	ErrTwoFactorRequired = errors.New("the company requires two-factor sign-in for this role")
	// ErrOtherTeams: see store.ErrOtherTeams.
	ErrOtherTeams = store.ErrOtherTeams
	// ErrResetSelf: see store.ErrResetSelf.
	ErrResetSelf = store.ErrResetSelf
)

// totpOpts are the authenticator's parameters.
var totpOpts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// RoleNeedsTwoFactor: the roles the company's policy covers, those who
// move money or manage the team.
func RoleNeedsTwoFactor(r Role) bool { return r == RoleOwner || r == RoleFinance }

// twoFactorRoles are the roles RoleNeedsTwoFactor names.
var twoFactorRoles = []string{string(RoleOwner), string(RoleFinance)}

// sealer seals authenticators' secrets (AES-256-GCM, a key derived from a
// configured secret for this use alone); the first seals, every one opens
// what it sealed (a rotated secret listed among the previous ones).
type sealer struct {
	id   [4]byte
	aead cipher.AEAD
	// recovery keys the HMAC of recovery codes (recoveryHash).
	recovery []byte
}

func newSealers(secrets []string) ([]sealer, error) {
	var out []sealer
	for _, s := range secrets {
		if s == "" {
			continue
		}
		id, aead, err := delivery.SealWith("cabinet-totp-seal:", s)
		if err != nil {
			return nil, err
		}
		rk, _ := delivery.DeriveKey("cabinet-recovery-key:", s)
		out = append(out, sealer{id: id, aead: aead, recovery: rk[:]})
	}
	return out, nil
}

// sealAD binds a sealed secret to its person: copied to another's row it
// opens nothing.
func sealAD(email string) []byte { return []byte("cabinet-totp:" + email) }

func (s *Service) seal(email, secret string) ([]byte, error) {
	if len(s.seals) == 0 {
		return nil, ErrTwoFactorUnavailable
	}
	cur := s.seals[0]
	nonce := make([]byte, cur.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return append(append(cur.id[:], nonce...), cur.aead.Seal(nil, nonce, []byte(secret), sealAD(email))...), nil
}

func (s *Service) unseal(email string, sealed []byte) (string, error) {
	for _, k := range s.seals {
		if len(sealed) < 4+k.aead.NonceSize() || [4]byte(sealed[:4]) != k.id {
			continue
		}
		rest := sealed[4:]
		secret, err := k.aead.Open(nil, rest[:k.aead.NonceSize()], rest[k.aead.NonceSize():], sealAD(email))
		if err != nil {
			return "", fmt.Errorf("open the authenticator of %s: %w", email, err)
		}
		return string(secret), nil
	}
	return "", fmt.Errorf("the authenticator of %s is sealed with a secret not configured: %w", email, ErrTwoFactorUnavailable)
}

// Enrolment is an authenticator begun and not yet confirmed: its secret
// for manual entry and its otpauth:// URL (the QR code's content).
type Enrolment struct {
	Secret string
	URL    string
}

// BeginTwoFactor makes the person a new authenticator secret, sealed and
// stored unconfirmed (replacing one not confirmed); a confirmed one is
// ErrTwoFactorOn.
func (s *Service) BeginTwoFactor(ctx context.Context, u *User) (*Enrolment, error) {
	if len(s.seals) == 0 {
		return nil, ErrTwoFactorUnavailable
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: TwoFactorIssuer, AccountName: u.Email, Period: 30,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return nil, fmt.Errorf("make an authenticator secret: %w", err)
	}
	sealed, err := s.seal(u.Email, key.Secret())
	if err != nil {
		return nil, err
	}
	if err := store.BeginTwoFactor(ctx, s.db, u.Email, sealed); err != nil {
		return nil, err
	}
	return &Enrolment{Secret: key.Secret(), URL: otpauthURL(u.Email, key.Secret())}, nil
}

// PendingTwoFactor is the person's authenticator begun and not confirmed
// (errs.NotFound: none; ErrTwoFactorOn: confirmed).
func (s *Service) PendingTwoFactor(ctx context.Context, u *User) (*Enrolment, error) {
	tf, err := store.GetTwoFactor(ctx, s.db, u.Email)
	if err != nil {
		return nil, err
	}
	if tf.ConfirmedAt != nil {
		return nil, ErrTwoFactorOn
	}
	secret, err := s.unseal(u.Email, tf.SealedSecret)
	if err != nil {
		return nil, err
	}
	return &Enrolment{Secret: secret, URL: otpauthURL(u.Email, secret)}, nil
}

// otpauthURL is the authenticator's URL (Google's Key Uri Format), the
// content of the QR code an app scans.
func otpauthURL(email, secret string) string {
	v := url.Values{"secret": {secret}, "issuer": {TwoFactorIssuer}, "period": {"30"}, "digits": {"6"}, "algorithm": {"SHA1"}}
	return (&url.URL{Scheme: "otpauth", Host: "totp", Path: "/" + TwoFactorIssuer + ":" + email, RawQuery: v.Encode()}).String()
}

// isCode: six digits, an authenticator's code (anything else may be a
// recovery code).
func isCode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// matchStep is the time step (within one either side of now) whose code
// is code, or ok false.
func matchStep(secret, code string, now time.Time) (step int64, ok bool) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if !isCode(code) {
		return 0, false
	}
	for _, d := range []int64{0, -1, 1} {
		t := now.Add(time.Duration(d) * 30 * time.Second)
		want, err := totp.GenerateCodeCustom(secret, t, totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return t.Unix() / 30, true
		}
	}
	return 0, false
}

// takeTwoFactor spends one try of the client's, the client's for this
// person and the person's two-factor budgets; giveBack returns the two
// person's ones (a right code). As the password's per-e-mail budget, the
// person's does not hold back an address the person signed in from within
// KnownAddressLifetime: whoever has the password and fails codes from
// elsewhere does not lock its owner out (the owner's address still has its
// own budget for the person, and the client's).
func (s *Service) takeTwoFactor(ctx context.Context, client, email string) (giveBack func(), wait time.Duration, ok bool) {
	if wait, ok := s.tfClient.Take(ctx, client); !ok {
		return nil, wait, false
	}
	account := client + "|" + email
	if wait, ok := s.tfAccount.Take(ctx, account); !ok {
		return nil, wait, false
	}
	person := true
	if wait, ok := s.tfPerson.Take(ctx, email); !ok {
		// Only when it matters: one query.
		known, err := store.KnownCabinetAddress(ctx, s.db, email, client, s.now().Add(-KnownAddressLifetime))
		if err != nil || !known {
			s.tfAccount.Return(ctx, account)
			return nil, wait, false
		}
		person = false
	}
	return func() {
		s.tfAccount.Return(ctx, account)
		if person {
			s.tfPerson.Return(ctx, email)
		}
	}, 0, true
}

// ConfirmTwoFactor turns the person's begun authenticator on with the
// current password (checked as ChangePassword checks it: ErrBadCredentials,
// ErrTooManyTries, ErrBusy) and a code it shows now (tries limited:
// ErrTooManyTries with the wait; a wrong one is ErrBadCode, nothing
// changed) and returns the recovery codes, shown once: only their hashes
// are kept. Every other session of the person ends, as with a new
// password; the returned user holds the session version the current
// session takes to stay (ErrSessionEnded: it ended meanwhile).
func (s *Service) ConfirmTwoFactor(ctx context.Context, addr string, u *User, password, code string) ([]string, *User, time.Duration, error) {
	if wait, err := s.recheckPassword(ctx, addr, u, password); err != nil {
		return nil, nil, wait, err
	}
	giveBack, wait, ok := s.takeTwoFactor(ctx, ratelimit.AddressGroup(addr), u.Email)
	if !ok {
		return nil, nil, wait, ErrTooManyTries
	}
	tf, err := store.GetTwoFactor(ctx, s.db, u.Email)
	if err != nil {
		return nil, nil, 0, err
	}
	if tf.ConfirmedAt != nil {
		return nil, nil, 0, ErrTwoFactorOn
	}
	secret, err := s.unseal(u.Email, tf.SealedSecret)
	if err != nil {
		return nil, nil, 0, err
	}
	step, ok := matchStep(secret, code, s.now())
	if !ok {
		return nil, nil, 0, ErrBadCode
	}
	codes, hashes := s.newRecoveryCodes(u.Email)
	// Only the secret the code was checked against is switched on.
	version, err := store.ConfirmTwoFactor(ctx, s.db, u.Email, u.ID, u.SessionVersion, tf.SealedSecret, step, hashes, s.now())
	if errors.Is(err, store.ErrSessionMoved) {
		return nil, nil, 0, ErrSessionEnded
	}
	if err != nil {
		return nil, nil, 0, err
	}
	giveBack()
	v := *u
	v.SessionVersion = version
	return codes, &v, 0, nil
}

// recheckPassword checks the signed-in user's password again before a
// change of how they sign in, as ChangePassword does (the sign-in
// budgets, a slot): a session alone does not make the change.
func (s *Service) recheckPassword(ctx context.Context, addr string, u *User, password string) (time.Duration, error) {
	client := ratelimit.AddressGroup(addr)
	_, wait, err := s.checkPassword(ctx, client, u.Email, password, func(p *store.CabinetPerson) (*User, error) {
		return u, store.RememberCabinetAddress(ctx, s.db, p.Email, client, s.now())
	})
	return wait, err
}

// newRecoveryCodes makes RecoveryCodes codes ("abcde-fghij", 50 random
// bits each) of the person and their hashes (under the current secret).
func (s *Service) newRecoveryCodes(email string) ([]string, [][]byte) {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789" // 32: no l, o, 0, 1
	codes, hashes := make([]string, RecoveryCodes), make([][]byte, RecoveryCodes)
	for i := range codes {
		b := make([]byte, 10)
		_, _ = rand.Read(b)
		for j := range b {
			b[j] = alphabet[b[j]%32]
		}
		codes[i] = string(b[:5]) + "-" + string(b[5:])
		hashes[i] = recoveryHash(s.seals[0].recovery, email, codes[i])
	}
	return codes, hashes
}

// recoveryHash is what is kept of a recovery code: its letters and digits
// lowercased (a code typed with spaces or capitals is the same), under an
// HMAC keyed with a key derived from the seal secret and bound to the
// person: a copy of the table alone cannot be searched by brute force, nor
// one precomputed search serve every person.
func recoveryHash(key []byte, email, code string) []byte {
	var b strings.Builder
	for _, r := range strings.ToLower(code) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("cabinet-recovery:" + email + "\x00" + b.String()))
	return m.Sum(nil)
}

// recoveryHashes are the code's hashes under every configured secret
// (the current one, then previous ones: codes made before a rotation).
func (s *Service) recoveryHashes(email, code string) [][]byte {
	out := make([][]byte, 0, len(s.seals))
	for _, k := range s.seals {
		out = append(out, recoveryHash(k.recovery, email, code))
	}
	return out
}

// checkSecondFactor accepts a code of the person's confirmed
// authenticator (its step spent) or an unused recovery code (spent);
// via says which. Tries are limited (ErrTooManyTries); a wrong or used
// code is ErrBadCode, recorded in the person's companies' audit logs.
func (s *Service) checkSecondFactor(ctx context.Context, addr, email, code string) (via string, wait time.Duration, err error) {
	client := ratelimit.AddressGroup(addr)
	giveBack, wait, ok := s.takeTwoFactor(ctx, client, email)
	if !ok {
		return "", wait, ErrTooManyTries
	}
	tf, err := store.GetTwoFactor(ctx, s.db, email)
	if err != nil {
		return "", 0, err
	}
	if tf.ConfirmedAt == nil {
		return "", 0, fmt.Errorf("two-factor of %s: %w", email, errs.NotFound)
	}
	code = strings.TrimSpace(code)
	if digits := strings.ReplaceAll(code, " ", ""); isCode(digits) {
		code = digits // "123 456", as some apps show it
	}
	if !isCode(code) {
		if hashes := s.recoveryHashes(email, code); len(code) <= 40 && len(hashes) > 0 {
			_, err := store.SpendRecoveryCode(ctx, s.db, email, hashes, s.now())
			if err == nil {
				giveBack()
				return "recovery_code", 0, nil
			}
			if !errors.Is(err, errs.NotFound) {
				return "", 0, err
			}
		}
	} else {
		secret, err := s.unseal(email, tf.SealedSecret)
		if err != nil {
			return "", 0, err
		}
		if step, ok := matchStep(secret, code, s.now()); ok {
			err := store.SpendTwoFactorStep(ctx, s.db, email, step)
			if err == nil {
				giveBack()
				return "two_factor", 0, nil
			}
			if !errors.Is(err, store.ErrStepUsed) {
				return "", 0, err
			}
		}
	}
	_ = store.AuditFailedSignIn(ctx, s.db, email, client, store.AuditTwoFactorFailed, "code")
	return "", 0, ErrBadCode
}

// SecondFactor completes a sign-in whose first factor (password or link)
// passed: the membership userID (the session's version still
// sessionVersion, else ErrSessionEnded) signs in with a code of the
// person's authenticator or a recovery code (see checkSecondFactor). The
// sign-in is recorded then, not before.
func (s *Service) SecondFactor(ctx context.Context, addr string, userID int64, sessionVersion int, code string) (*User, time.Duration, error) {
	u, err := s.User(ctx, userID)
	if errors.Is(err, errs.NotFound) {
		return nil, 0, ErrSessionEnded
	}
	if err != nil {
		return nil, 0, err
	}
	if u.DisabledAt != nil || u.SessionVersion != sessionVersion {
		return nil, 0, ErrSessionEnded
	}
	via, wait, err := s.checkSecondFactor(ctx, addr, u.Email, code)
	if err != nil {
		return nil, wait, err
	}
	if err := store.RecordCabinetSignInVia(ctx, s.db, u.ID, ratelimit.AddressGroup(addr), s.now(), via); err != nil {
		return nil, 0, err
	}
	return u, 0, nil
}

// HasTwoFactor reports whether the person has a confirmed authenticator.
func (s *Service) HasTwoFactor(ctx context.Context, email string) (bool, error) {
	tf, err := store.GetTwoFactor(ctx, s.db, email)
	if errors.Is(err, errs.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return tf.ConfirmedAt != nil, nil
}

// TwoFactorState is whether the user's person has a confirmed
// authenticator, and whether the company requires one of the user's role.
func (s *Service) TwoFactorState(ctx context.Context, u *User) (enrolled, required bool, err error) {
	enrolled, policy, err := store.TwoFactorState(ctx, s.db, u.Email, u.CompanyID)
	return enrolled, policy && RoleNeedsTwoFactor(u.Role), err
}

// TwoFactorRequired is whether the company requires an authenticator (of
// the roles RoleNeedsTwoFactor names).
func (s *Service) TwoFactorRequired(ctx context.Context, companyID int64) (bool, error) {
	_, required, err := store.TwoFactorState(ctx, s.db, "", companyID)
	return required, err
}

// DisableTwoFactor turns the person's authenticator off, after a code of
// it or a recovery code (as at sign-in: limited, ErrBadCode). It is the
// person's: where any of the person's companies requires it of the role
// the person has there, it cannot be turned off (ErrTwoFactorRequired),
// from that company's cabinet or any other. An authenticator
// begun and never confirmed is dropped without a code. Turning it off
// ends every other session of the person; the returned user holds the
// session version the current session takes to stay (ErrSessionEnded: it
// ended meanwhile).
func (s *Service) DisableTwoFactor(ctx context.Context, addr string, u *User, code string) (*User, time.Duration, error) {
	tf, err := store.GetTwoFactor(ctx, s.db, u.Email)
	if err != nil {
		return nil, 0, err
	}
	if tf.ConfirmedAt != nil {
		if required, err := store.TwoFactorRequiredOfPerson(ctx, s.db, u.Email, twoFactorRoles); err != nil {
			return nil, 0, err
		} else if required {
			return nil, 0, ErrTwoFactorRequired
		}
		if _, wait, err := s.checkSecondFactor(ctx, addr, u.Email, code); err != nil {
			return nil, wait, err
		}
	}
	version, err := store.DisableTwoFactor(ctx, s.db, u.Email, u.ID, u.SessionVersion, s.now())
	if errors.Is(err, store.ErrSessionMoved) {
		return nil, 0, ErrSessionEnded
	}
	if err != nil {
		return nil, 0, err
	}
	v := *u
	v.SessionVersion = version
	return &v, 0, nil
}

// ResetTwoFactor is an owner's reset of a member's authenticator (see
// store.ResetMemberTwoFactor): the member signs in with the password
// alone once more, and enrols again where the company requires it.
func (s *Service) ResetTwoFactor(ctx context.Context, companyID, userID int64) (*User, error) {
	return userOf(store.ResetMemberTwoFactor(ctx, s.db, companyID, userID, s.now()))
}

// ResetPersonTwoFactor is the operator's reset of a person's
// authenticator, in every company (store.ResetPersonTwoFactor).
func (s *Service) ResetPersonTwoFactor(ctx context.Context, email string) error {
	email, err := NormalizeEmail(email)
	if err != nil {
		return err
	}
	return store.ResetPersonTwoFactor(ctx, s.db, email, s.now())
}

// SetTwoFactorRequired sets the company's policy (owner and finance must
// sign in with a second factor).
func (s *Service) SetTwoFactorRequired(ctx context.Context, companyID int64, required bool) error {
	return store.SetTwoFactorRequired(ctx, s.db, companyID, required)
}
