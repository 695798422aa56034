#!/usr/bin/env python3
"""Numpy emulation of warpfft's type-3 pipeline (no GPU), for checking its math and its accuracy
budget: parameters from libwarpfft's warpfft_plan_params3 (ctypes), then centring/rescaling,
pre-phase, spreading with the kernel (kernels/kernel_shape.h, read by
kernels/test/kernel_shape.py), the inner type-2 step (exact, or emulated with its own
kernel, FFT and interpolation, 1D), and the division by phihat with the post-phase; relative l2
error against the exact sum. Worst case "edges": sources at both extremes, targets at both band
edges (like band_edge in tests/gpu_accuracy/point_sets.rs for types 1/2).

    WARPFFT_LIBRARY=target/debug/libwarpfft.so python3 scripts/type3_emulate.py
"""
import os
import ctypes, numpy as np, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernels", "test"))
from kernel_shape import phi
lib = ctypes.CDLL(os.environ.get("WARPFFT_LIBRARY", "target/debug/libwarpfft.so"))
class Opts(ctypes.Structure):
    _fields_=[("struct_size",ctypes.c_uint32),("modeord",ctypes.c_int32),("method",ctypes.c_int32),("device",ctypes.c_int32),("upsampfac",ctypes.c_double),("stream",ctypes.c_uint64),("bin_size",ctypes.c_int32*3),("max_subprob",ctypes.c_int32)]
class Info(ctypes.Structure):
    _fields_=[("type",ctypes.c_int32),("dim",ctypes.c_int32),("precision",ctypes.c_int32),("method",ctypes.c_int32),("width",ctypes.c_int32),("beta",ctypes.c_double),("upsampfac",ctypes.c_double),("n_modes",ctypes.c_int64*3),("n_fine",ctypes.c_int64*3),("bin_size",ctypes.c_int32*3),("ntransf",ctypes.c_int64),("n_points",ctypes.c_int64),("workspace_bytes",ctypes.c_size_t),
      ("n_targets",ctypes.c_int64),("inner_precision",ctypes.c_int32),("inner_width",ctypes.c_int32),("inner_beta",ctypes.c_double),("inner_fine",ctypes.c_int64*3),("x_center",ctypes.c_double*3),("x_half",ctypes.c_double*3),("s_center",ctypes.c_double*3),("s_half",ctypes.c_double*3),("gamma",ctypes.c_double*3)]
D3=ctypes.c_double*3
def params(dim,tol,prec,x,s):
    info=Info()
    xl=D3(*[x[d].min() for d in range(dim)]+[0]*(3-dim)); xh=D3(*[x[d].max() for d in range(dim)]+[0]*(3-dim))
    sl=D3(*[s[d].min() for d in range(dim)]+[0]*(3-dim)); sh=D3(*[s[d].max() for d in range(dim)]+[0]*(3-dim))
    st=lib.warpfft_plan_params3(dim,ctypes.c_int64(1),ctypes.c_double(tol),prec,None,xl,xh,sl,sh,ctypes.byref(info))
    assert st==0, ctypes.c_char_p(lib.warpfft_last_error()).value if False else st
    return info
def phihat(xi,nf,w,beta):
    n=4*w+32; t,g=np.polynomial.legendre.leggauss(n)
    th=0.5*np.pi*t; tt=0.5*w*np.sin(th); jac=0.5*w*np.cos(th)*0.5*np.pi
    ph=phi(tt,w,beta)
    return np.array([np.sum(g*jac*ph*np.cos(2*np.pi*x*tt/nf)) for x in np.atleast_1d(xi)])
def run(dim,tol,x,s,c,iflag=1):
    info=params(dim,tol,2,x,s)
    w=info.width; beta=info.beta; sig=info.upsampfac
    nf=[info.n_fine[d] for d in range(dim)]
    C=[info.x_center[d] for d in range(dim)]; Dc=[info.s_center[d] for d in range(dim)]; gam=[info.gamma[d] for d in range(dim)]
    M=len(c); sg=1 if iflag>=0 else -1
    xp=[(x[d]-C[d])/gam[d] for d in range(dim)]
    cp=c*np.exp(1j*sg*sum(Dc[d]*(x[d]-C[d]) for d in range(dim)))
    b=np.zeros(nf[::-1],complex)
    # per-dim footprint
    idx=[];ker=[]
    for d in range(dim):
        u=(xp[d]/(2*np.pi)); u=(u-np.floor(u))*nf[d]
        i0=np.ceil(u-w/2).astype(np.int64)
        tt=np.arange(w)
        idx.append(np.mod(i0[:,None]+tt[None,:],nf[d]))
        ker.append(phi((i0[:,None]+tt[None,:]).astype(float)-u[:,None],w,beta))
        # margin check
        assert np.all(np.abs(xp[d]*nf[d]/(2*np.pi))+w/2<=nf[d]/2), "wrap"
    if dim==1:
        np.add.at(b,idx[0].ravel(),(cp[:,None]*ker[0]).ravel())
    elif dim==2:
        vals=cp[:,None,None]*ker[1][:,:,None]*ker[0][:,None,:]
        I1=np.broadcast_to(idx[0][:,None,:],vals.shape); I2=np.broadcast_to(idx[1][:,:,None],vals.shape)
        np.add.at(b,(I2.ravel(),I1.ravel()),vals.ravel())
    # inner: exact sum over grid at s' = h*gamma*(s-D)
    ls=[np.where(np.arange(n)<n//2,np.arange(n),np.arange(n)-n) for n in nf]
    K=len(s[0]); out=np.zeros(K,complex)
    for k in range(K):
        sp=[2*np.pi/nf[d]*gam[d]*(s[d][k]-Dc[d]) for d in range(dim)]
        e=np.exp(1j*sg*ls[0]*sp[0])
        if dim==2:
            e=np.exp(1j*sg*ls[1]*sp[1])[:,None]*e[None,:]
        out[k]=np.sum(b*e)
    fac=np.ones(K,complex)
    for d in range(dim):
        fac/=phihat(gam[d]*(s[d]-Dc[d]),nf[d],w,beta)
    fac*=np.exp(1j*sg*sum(C[d]*s[d] for d in range(dim)))
    f=out*fac
    ex=np.array([np.sum(c*np.exp(1j*sg*sum(s[d][k]*x[d] for d in range(dim)))) for k in range(K)])
    return np.linalg.norm(f-ex)/np.linalg.norm(ex), info
rng=np.random.default_rng(1)
for dim,tol,xr,sr in [(1,1e-5,(-np.pi,np.pi),(-300,300)),(1,1e-9,(5,9),(-240,60)),(1,1e-3,(1.3,1.35),(32000,32200)),(2,1e-6,(-np.pi,np.pi),(-20,20)),(2,1e-9,(5,9),(-16,4)),(1,1e-12,(-10,10),(-100,100))]:
    M=2000;K=300
    x=[rng.uniform(*xr,M) for _ in range(dim)]; s=[rng.uniform(*sr,K) for _ in range(dim)]
    c=rng.uniform(-1,1,M)+1j*rng.uniform(-1,1,M)
    for iflag in (1,-1):
        e,info=run(dim,tol,x,s,c,iflag)
        print(f"{dim}D tol {tol:g} x{xr} s{sr} iflag {iflag}: err {e:.2e}  w {info.width} nf {list(info.n_fine)[:dim]}", "OK" if e<=tol else "FAIL")

print("--- with an emulated inner type 2 (1D) ---")
def run_full(tol,x,s,c,iflag=1):
    info=params(1,tol,2,[x],[s])
    w=info.width; beta=info.beta; nf=info.n_fine[0]; C=info.x_center[0]; Dc=info.s_center[0]; gam=info.gamma[0]
    sg=1 if iflag>=0 else -1
    xp=(x-C)/gam; cp=c*np.exp(1j*sg*Dc*(x-C))
    u=(xp/(2*np.pi)); u=(u-np.floor(u))*nf; i0=np.ceil(u-w/2).astype(np.int64); tt=np.arange(w)
    b=np.zeros(nf,complex); np.add.at(b,np.mod(i0[:,None]+tt,nf).ravel(),(cp[:,None]*phi((i0[:,None]+tt).astype(float)-u[:,None],w,beta)).ravel())
    # inner type 2: modes l (FFT order), nf2 grid
    nf2=info.inner_fine[0]; w2=info.inner_width; b2=info.inner_beta
    l=np.where(np.arange(nf)<nf//2,np.arange(nf),np.arange(nf)-nf)
    fw=np.zeros(nf2,complex); fw[np.mod(l,nf2)]=b/phihat(l.astype(float),nf2,w2,b2)
    G=np.fft.ifft(fw)*nf2 if sg>0 else np.fft.fft(fw)
    sp=2*np.pi/nf*gam*(s-Dc)
    u2=(sp/(2*np.pi)); u2=(u2-np.floor(u2))*nf2; j0=np.ceil(u2-w2/2).astype(np.int64); t2=np.arange(w2)
    out=np.sum(G[np.mod(j0[:,None]+t2,nf2)]*phi((j0[:,None]+t2).astype(float)-u2[:,None],w2,b2),axis=1)
    f=out/phihat(gam*(s-Dc),nf,w,beta)*np.exp(1j*sg*C*s)
    ex=np.array([np.sum(c*np.exp(1j*sg*sk*x)) for sk in s])
    return np.linalg.norm(f-ex)/np.linalg.norm(ex),info
for tol,xr,sr,dist in [(1e-5,(-np.pi,np.pi),(-300,300),"u"),(1e-9,(5,9),(-240,60),"u"),(1e-5,(-np.pi,np.pi),(-300,300),"edges"),(1e-9,(-np.pi,np.pi),(-300,300),"edges"),(1e-12,(-3,3),(-200,200),"u"),(1e-3,(-1,1),(-50,50),"edges")]:
    M=3000;K=400
    if dist=="u":
        x=rng.uniform(*xr,M); s=rng.uniform(*sr,K)
    else: # sources at both extremes, targets at both band edges
        x=np.where(rng.uniform(size=M)<0.5,xr[0],xr[1])+rng.uniform(0,0.01,M)*np.sign(-np.array(xr).mean()+0.0001)
        x=np.clip(x,*xr); s=np.where(rng.uniform(size=K)<0.5,sr[0],sr[1])+rng.uniform(-1,1,K)*0.001*(sr[1]-sr[0]); s=np.clip(s,*sr)
    c=rng.uniform(-1,1,M)+1j*rng.uniform(-1,1,M)
    for iflag in (1,-1):
        e,info=run_full(tol,x,s,c,iflag)
        print(f"tol {tol:g} {dist} x{xr} s{sr} iflag {iflag}: err {e:.2e} w {info.width}/{info.inner_width} nf {info.n_fine[0]}/{info.inner_fine[0]}", "OK" if e<=tol else "FAIL")
