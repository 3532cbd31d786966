package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestBinaryOverTLS reads a store through rediss:// from a redis-server
// serving TLS with a certificate of a test authority, which the binary
// trusts through SSL_CERT_FILE as any Go program on Linux does.
func TestBinaryOverTLS(t *testing.T) {
	dir := t.TempDir()
	ca, crt, key := writeCerts(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv, err := redistest.Start("--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", crt, "--tls-key-file", key,
		"--tls-ca-cert-file", ca, "--tls-auth-clients", "no")
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { srv.Close() })
	client := srv.Client() // the plain port: a process that sets the store up
	defer client.Close()
	if _, err := redisstore.New(context.Background(), client, redisstore.WithPrefix("tls")); err != nil {
		t.Fatal(err)
	}
	bin := binary(t)
	run := func(url string) (string, string, int) {
		cmd := exec.Command(bin, "-redis", url, "-prefix", "tls", "runs", "ls", "-o", "json")
		cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+ca)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	out, errs, code := run("rediss://127.0.0.1:" + strconv.Itoa(tlsPort))
	var runs struct{ Items []runItem }
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs.Items) != 0 {
		t.Fatalf("rediss://: exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := run("redis://127.0.0.1:" + strconv.Itoa(tlsPort)); code != 1 || errs == "" {
		t.Fatalf("redis:// to the TLS port: exit %d: %s", code, errs)
	}
}

// writeCerts writes a test authority and a certificate of 127.0.0.1 it
// signed, and answers their paths and the key's.
func writeCerts(t *testing.T, dir string) (ca, crt, key string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "plait test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, kind string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server.key", "EC PRIVATE KEY", keyDER)
}
